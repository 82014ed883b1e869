import { useState } from 'preact/hooks';
import { api, qs } from '../api.js';
import { html, useLoad, usePages, ErrorLine, Clip, fmtTime } from '../ui.js';

const STATUSES = ['', 'SUBMITTED', 'QUEUED', 'IN_PROGRESS', 'SUCCESS', 'FAILURE'];
const requested = (r) => [r?.seconds ? `${r.seconds} s` : null, r?.size, r?.resolution].filter(Boolean).join(' · ') || '—';
const fromS = (s) => (s ? new Date(s * 1000).toLocaleString() : '—');

const iso = (v) => (v ? new Date(v).toISOString() : '');
const EMPTY = { id: '', status: '', key: '', model: '', provider: '', from: '', to: '' };

export function Tasks() {
  const [form, setForm] = useState(EMPTY);
  const [applied, setApplied] = useState(EMPTY);
  const { cursor, reset, Pager } = usePages();
  const [data, error] = useLoad(
    () => api('GET', `/tasks${qs({ id: applied.id.trim(), status: applied.status, key: applied.key.trim(), model: applied.model.trim(), provider: applied.provider.trim(), from: iso(applied.from), to: iso(applied.to), cursor, limit: 50 })}`),
    [applied, cursor],
  );
  const set = (k) => (e) => setForm({ ...form, [k]: e.target.value });
  const apply = (e) => {
    e.preventDefault();
    setApplied({ ...form });
    reset();
  };
  return html`
    <h1>Tasks</h1>
    <form class="inline" id="task-filter" onSubmit=${apply}>
      <input name="id" placeholder="task id or its start" value=${form.id} onInput=${set('id')} />
      <select name="status" id="task-status" value=${form.status} onChange=${set('status')}>
        ${STATUSES.map((s) => html`<option value=${s}>${s || 'any status'}</option>`)}
      </select>
      <input name="key" placeholder="key id" value=${form.key} onInput=${set('key')} />
      <input name="model" placeholder="model" value=${form.model} onInput=${set('model')} />
      <input name="provider" placeholder="provider (channel type)" value=${form.provider} onInput=${set('provider')} />
      <label>Submitted from <input name="from" type="datetime-local" value=${form.from} onInput=${set('from')} /></label>
      <label>to <input name="to" type="datetime-local" value=${form.to} onInput=${set('to')} /></label>
      <button type="submit">Search</button>
    </form>
    <${ErrorLine} error=${error} />
    <table id="tasks">
      <thead><tr><th>Task</th><th>Model</th><th>Key</th><th>Channel</th><th>Status</th><th>Progress</th><th>Submitted</th><th>Fail reason</th></tr></thead>
      <tbody>${(data?.data ?? []).map(
        (t) => html`<tr data-task=${t.task_id}><td><a href=${`#/tasks/${encodeURIComponent(t.task_id)}`}>${t.task_id}</a></td><td><${Clip} text=${t.model} /></td><td>${t.key_id}</td><td>${t.channel}${t.provider ? html`<br /><small>${t.provider}</small>` : ''}</td><td>${t.status}</td>
          <td><progress max="100" value=${parseInt(t.progress, 10) || 0}></progress> ${t.progress}</td><td>${fromS(t.submit_time)}</td><td class="fail-reason">${t.fail_reason ? html`<${Clip} text=${t.fail_reason} />` : ''}</td></tr>`,
      )}</tbody>
    </table>
    <${Pager} next=${data?.next_cursor} />
  `;
}

export function TaskPage({ id }) {
  const [d, error] = useLoad(() => api('GET', `/tasks/${encodeURIComponent(id)}`), [id]);
  return html`
    <p><a href="#/tasks">← Tasks</a></p>
    <h1>Task <code>${id}</code></h1>
    <${ErrorLine} error=${error} />
    ${!d && !error && html`<p class="loading">Loading…</p>`}
    ${d &&
    html`
      <dl class="facts" data-task=${d.task.task_id}>
        <dt>Status</dt><dd id="task-status-value">${d.task.status} (${d.task.progress})</dd>
        ${d.task.status === 'FAILURE' && html`<dt>Fail reason</dt><dd id="task-fail-reason">${d.task.fail_reason}</dd>`}
        <dt>Model</dt><dd><${Clip} text=${d.model} /> → <${Clip} text=${d.upstream_model} /></dd>
        <dt>Requested</dt><dd id="task-requested">${requested(d.requested)}</dd>
        <dt>Key</dt><dd>${d.key_id}</dd>
        <dt>Channel</dt><dd>${d.channel} (${d.provider ?? '?'})</dd>
        <dt>Upstream id</dt><dd>${d.upstream_id}</dd>
        <dt>Cost</dt><dd>${d.cost ? `charged $${d.cost.charged_usd}, held $${d.cost.held_usd} (${d.cost.state})` : 'unlimited key'}</dd>
        <dt>Submitted</dt><dd>${fromS(d.task.submit_time)}</dd>
        <dt>Finished</dt><dd>${fromS(d.task.finish_time)}</dd>
      </dl>
      ${d.task.status === 'SUCCESS' && html`<video id="video" controls muted playsinline preload="auto" src=${`/admin/api/tasks/${encodeURIComponent(id)}/content`}></video>`}
      <h2>Timeline</h2>
      <ol id="timeline">${d.timeline.map((e) => html`<li><time>${fmtTime(e.at)}</time> ${e.from ?? '—'} → <b>${e.to}</b> ${e.detail}</li>`)}</ol>
      <h2>Provider object</h2>
      <pre id="provider-object">${JSON.stringify(d.task.data, null, 2)}</pre>
    `}
  `;
}
