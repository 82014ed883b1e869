import { useState } from 'preact/hooks';
import { api, qs } from '../api.js';
import { html, useAction, useLoad, usePages, ErrorLine, CopyValue, Clip, fmtTime } from '../ui.js';
import { shown } from '../text.js';
import { BudgetCell } from './projects.js';

const list = (s) => (s.trim() ? s.split(',').map((x) => x.trim()).filter(Boolean) : null);

function CreateKey({ onCreated }) {
  const [form, setForm] = useState({ name: '', models: '', rpm: '', concurrency: '', credit: '' });
  const { error, act } = useAction();
  const [made, setMade] = useState(null);
  const set = (k) => (e) => setForm({ ...form, [k]: e.target.value });
  const submit = (e) => {
    e.preventDefault();
    act(async () => {
      const body = { name: form.name, models: list(form.models) };
      // Sent as typed: the server says exactly what a limit allows.
      if (form.rpm.trim()) body.rpm = form.rpm.trim();
      if (form.concurrency.trim()) body.concurrency = form.concurrency.trim();
      if (form.credit) body.credit_usd = form.credit;
      const key = await api('POST', '/keys', body);
      setMade(key);
      setForm({ name: '', models: '', rpm: '', concurrency: '', credit: '' });
      onCreated();
    });
  };
  return html`
    <form class="inline" id="create-key" onSubmit=${submit}>
      <input name="name" placeholder="name" required value=${form.name} onInput=${set('name')} />
      <input name="models" placeholder="models (a,b; empty = all)" value=${form.models} onInput=${set('models')} />
      <input name="rpm" placeholder="rpm" size="5" value=${form.rpm} onInput=${set('rpm')} />
      <input name="concurrency" placeholder="concurrency" size="8" value=${form.concurrency} onInput=${set('concurrency')} />
      <input name="credit" placeholder="credit USD (empty = unlimited)" value=${form.credit} onInput=${set('credit')} />
      <button type="submit">Create key</button>
    </form>
    <${ErrorLine} error=${error} />
    ${made &&
    html`<div class="once" id="new-key">
      <p>Key <b>${shown(made.name)}</b> created. It is shown only this once:</p>
      <${CopyValue} id="new-key-value" text=${made.key} />
      <button type="button" onClick=${() => setMade(null)}>Done</button>
    </div>`}
  `;
}

/** The edit form's fields as stored: what every opening of the form starts from. */
const stored = (k) => ({ rpm: String(k.rpm), concurrency: String(k.concurrency), models: (k.models ?? []).join(','), expires: k.expires_at ?? '' });

function KeyRow({ k, onChanged }) {
  const [mode, setMode] = useState(null);
  const { error, setError, act } = useAction();
  const [edit, setEdit] = useState(() => stored(k));
  const [amount, setAmount] = useState('+10');
  // Opening a form starts from the stored values: what a refused attempt typed is not kept.
  const toggle = (next) => {
    setError(null);
    setEdit(stored(k));
    setAmount('+10');
    setMode(mode === next ? null : next);
  };
  const run = (work) =>
    act(async () => {
      await work();
      setMode(null);
      onChanged();
    });
  return html`
    <tr data-key=${k.id} data-name=${k.name}>
      <td>${shown(k.name)}<br /><small>${k.id}</small></td>
      <td><code>${k.prefix}</code></td>
      <td class=${`status-${k.status}`}>${k.status}</td>
      <td>${k.models ? k.models.map((m, i) => html`${i ? ', ' : ''}<${Clip} text=${m} />`) : 'all'}</td>
      <td>${k.rpm || '—'} / ${k.concurrency || '—'}</td>
      <td class="credit">${k.credit_usd === null ? 'unlimited' : `$${k.credit_usd}`}${Number(k.held_usd) ? html`<br /><small>held $${k.held_usd}</small>` : ''}${Number(k.leased_usd) ? html`<br /><small>leased $${k.leased_usd}</small>` : ''}${Number(k.owes_usd) ? html`<br /><small>owes $${k.owes_usd}</small>` : ''}</td>
      <td class="key-budget">${k.project ? html`<small>project ${shown(k.project)}</small><br />` : ''}<${BudgetCell} v=${k} /></td>
      <td class="spent">$${k.spent_usd}</td>
      <td class="last-used">${k.last_used_at ? fmtTime(k.last_used_at) : 'never'}</td>
      <td>${fmtTime(k.created_at)}</td>
      <td>${fmtTime(k.expires_at)}</td>
      <td class="actions">
        ${k.status !== 'revoked' &&
        html`
          <button type="button" class="edit" onClick=${() => toggle('edit')}>Edit</button>
          ${k.credit_usd !== null && html`<button type="button" class="topup" onClick=${() => toggle('credit')}>Top up</button>`}
          <button type="button" class="revoke" onClick=${() => toggle('revoke')}>Revoke</button>
        `}
        ${mode === 'edit' &&
        html`<form class="inline" onSubmit=${(e) => (e.preventDefault(), run(() => api('PATCH', `/keys/${k.id}`, { rpm: edit.rpm.trim() || '0', concurrency: edit.concurrency.trim() || '0', models: list(edit.models), expires_at: edit.expires || null })))}>
          <input name="rpm" size="5" value=${edit.rpm} onInput=${(e) => setEdit({ ...edit, rpm: e.target.value })} />
          <input name="concurrency" size="5" value=${edit.concurrency} onInput=${(e) => setEdit({ ...edit, concurrency: e.target.value })} />
          <input name="models" placeholder="models" value=${edit.models} onInput=${(e) => setEdit({ ...edit, models: e.target.value })} />
          <input name="expires" placeholder="expires (ISO)" value=${edit.expires} onInput=${(e) => setEdit({ ...edit, expires: e.target.value })} />
          <button type="submit">Save</button>
        </form>`}
        ${mode === 'credit' &&
        html`<form class="inline" onSubmit=${(e) => (e.preventDefault(), run(() => api('POST', `/keys/${k.id}/credit`, { usd: amount })))}>
          <input name="usd" size="8" title="+ to add, - to take away; up to 1000000000 USD, 6 decimals" value=${amount} onInput=${(e) => setAmount(e.target.value)} />
          <button type="submit">Apply</button>
        </form>`}
        ${mode === 'revoke' && html`<button type="button" class="confirm-revoke danger" onClick=${() => run(() => api('POST', `/keys/${k.id}/revoke`))}>Confirm revoke</button>`}
        <${ErrorLine} error=${error} />
      </td>
    </tr>
  `;
}

export function Keys() {
  const [q, setQ] = useState('');
  const { cursor, reset, Pager } = usePages();
  const [data, error, reload] = useLoad(() => api('GET', `/keys${qs({ q, cursor, limit: 50 })}`), [q, cursor]);
  return html`
    <h1>Keys</h1>
    <${CreateKey} onCreated=${reload} />
    <p><input id="key-search" placeholder="name or id prefix" aria-label="Search keys by name or id prefix" value=${q} onInput=${(e) => (setQ(e.target.value), reset())} /></p>
    <${ErrorLine} error=${error} />
    <table id="keys">
      <thead><tr><th>Name</th><th>Prefix</th><th>Status</th><th>Models</th><th>RPM / conc.</th><th>Credit</th><th>Budget</th><th>Spent</th><th>Last used</th><th>Created</th><th>Expires</th><th></th></tr></thead>
      <tbody>${(data?.data ?? []).map((k) => html`<${KeyRow} key=${k.id + k.credit_usd + k.status + k.rpm + k.budget_spent_usd} k=${k} onChanged=${reload} />`)}</tbody>
    </table>
    <${Pager} next=${data?.next_cursor} />
  `;
}
