import { useState } from 'preact/hooks';
import { api, qs } from '../api.js';
import { html, useLoad, usePages, ErrorLine, Clip } from '../ui.js';

export function Usage() {
  const [filter, setFilter] = useState({ key: '', model: '', status: '', from: '', to: '', group_by: '' });
  const [applied, setApplied] = useState(filter);
  const { cursor, reset, Pager } = usePages();
  const [data, error] = useLoad(() => api('GET', `/usage${qs({ ...applied, cursor: applied.group_by ? null : cursor, limit: 100 })}`), [applied, cursor]);
  const set = (k) => (e) => setFilter({ ...filter, [k]: e.target.value });
  const apply = (e) => {
    e.preventDefault();
    setApplied(filter);
    reset();
  };
  const csv = `/admin/api/usage${qs({ ...applied, group_by: null, format: 'csv' })}`;
  return html`
    <h1>Usage</h1>
    <form class="inline" id="usage-filter" onSubmit=${apply}>
      <input name="key" placeholder="key id" value=${filter.key} onInput=${set('key')} />
      <input name="model" placeholder="model" value=${filter.model} onInput=${set('model')} />
      <input name="status" placeholder="status (429, 4xx)" size="10" value=${filter.status} onInput=${set('status')} />
      <input name="from" placeholder="from (ISO)" value=${filter.from} onInput=${set('from')} />
      <input name="to" placeholder="to (ISO)" value=${filter.to} onInput=${set('to')} />
      <select name="group_by" value=${filter.group_by} onChange=${set('group_by')}>
        <option value="">rows</option><option value="key">by key</option><option value="model">by model</option><option value="hour">by hour</option><option value="day">by day</option>
      </select>
      <button type="submit">Apply</button>
      <a class="button" id="csv" href=${csv} download="mediagate-usage.csv">Export CSV</a>
    </form>
    <${ErrorLine} error=${error} />
    ${data?.group_by
      ? html`<table id="usage"><thead><tr><th>${data.group_by}</th><th>Requests</th><th>Errors</th><th>Input</th><th>Output</th><th>USD</th></tr></thead>
          <tbody>${data.data.map((g) => html`<tr><td><${Clip} text=${g.group} /></td><td>${g.requests}</td><td>${g.errors}</td><td>${g.input_units}</td><td>${g.output_units}</td><td>${g.cost_usd}</td></tr>`)}</tbody></table>`
      : html`<table id="usage"><thead><tr><th>Time</th><th>Key</th><th>Model</th><th>Channel</th><th>Endpoint</th><th>Status</th><th>In</th><th>Out</th><th>USD</th><th>Billed by</th><th>ms</th><th>Error</th></tr></thead>
          <tbody>${(data?.data ?? []).map(
            (r) => html`<tr data-key=${r.key_id}><td>${new Date(r.created_at).toLocaleString()}</td><td>${r.key_id}</td><td><${Clip} text=${r.model} /></td><td>${r.channel}</td><td>${r.endpoint}</td><td>${r.status}</td><td>${r.input_units}</td><td>${r.output_units}</td><td>${r.cost_usd}</td><td><${Clip} text=${r.billed_by} /></td><td>${r.latency_ms}</td><td class="usage-error">${r.error ? html`<${Clip} text=${r.error} />` : ''}</td></tr>`,
          )}</tbody></table>
          <${Pager} next=${data?.next_cursor} />`}
  `;
}
