import { useState } from 'preact/hooks';
import { api, qs } from '../api.js';
import { html, useLoad, usePages, ErrorLine, fmtTime } from '../ui.js';

const STATUSES = ['', 'SUBMITTED', 'QUEUED', 'IN_PROGRESS', 'SUCCESS', 'FAILURE'];
const fromS = (s) => (s ? new Date(s * 1000).toLocaleString() : '—');

export function Tasks() {
  const [status, setStatus] = useState('');
  const { cursor, reset, Pager } = usePages();
  const [data, error] = useLoad(() => api('GET', `/tasks${qs({ status, cursor, limit: 50 })}`), [status, cursor]);
  return html`
    <h1>Tasks</h1>
    <label>Status <select id="task-status" value=${status} onChange=${(e) => (setStatus(e.target.value), reset())}>
      ${STATUSES.map((s) => html`<option value=${s}>${s || 'any'}</option>`)}
    </select></label>
    <${ErrorLine} error=${error} />
    <table id="tasks">
      <thead><tr><th>Task</th><th>Model</th><th>Key</th><th>Channel</th><th>Status</th><th>Progress</th><th>Submitted</th></tr></thead>
      <tbody>${(data?.data ?? []).map(
        (t) => html`<tr data-task=${t.task_id}><td><a href=${`#/tasks/${encodeURIComponent(t.task_id)}`}>${t.task_id}</a></td><td>${t.model}</td><td>${t.key_id}</td><td>${t.channel}</td><td>${t.status}</td>
          <td><progress max="100" value=${parseInt(t.progress, 10) || 0}></progress> ${t.progress}</td><td>${fromS(t.submit_time)}</td></tr>`,
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
    ${d &&
    html`
      <dl class="facts">
        <dt>Status</dt><dd id="task-status-value">${d.task.status} (${d.task.progress})</dd>
        <dt>Model</dt><dd>${d.model} → ${d.upstream_model}</dd>
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
