import { useState } from 'preact/hooks';
import { api, qs } from '../api.js';
import { html, useLoad, usePages, ErrorLine } from '../ui.js';
import { shown } from '../text.js';

// Request logs (request_logs.enabled): search by key, model, status, time and trace id; the bodies
// (stored only for the keys and models the config names) open under each row.

export function RequestLogs() {
  const [filter, setFilter] = useState({ key: '', model: '', status: '', from: '', to: '', trace_id: '' });
  const [applied, setApplied] = useState(filter);
  const { cursor, reset, Pager } = usePages();
  const [data, error] = useLoad(() => api('GET', `/request-logs${qs({ ...applied, cursor, limit: 100 })}`), [applied, cursor]);
  const set = (k) => (e) => setFilter({ ...filter, [k]: e.target.value });
  const apply = (e) => {
    e.preventDefault();
    setApplied(filter);
    reset();
  };
  const csv = `/admin/api/request-logs${qs({ ...applied, format: 'csv' })}`;
  return html`
    <h1>Request logs</h1>
    <form class="inline" id="request-logs-filter" onSubmit=${apply}>
      <input name="key" placeholder="key id" value=${filter.key} onInput=${set('key')} />
      <input name="model" placeholder="model" value=${filter.model} onInput=${set('model')} />
      <input name="status" placeholder="status (429, 4xx)" size="10" value=${filter.status} onInput=${set('status')} />
      <input name="from" placeholder="from (ISO)" value=${filter.from} onInput=${set('from')} />
      <input name="to" placeholder="to (ISO)" value=${filter.to} onInput=${set('to')} />
      <input name="trace_id" placeholder="trace id" size="34" value=${filter.trace_id} onInput=${set('trace_id')} />
      <button type="submit">Apply</button>
      <a class="button" id="csv" href=${csv} download="mediagate-request-logs.csv">Export CSV</a>
    </form>
    <${ErrorLine} error=${error} />
    <table id="request-logs">
      <thead><tr><th>Time</th><th>Trace</th><th>Key</th><th>Model</th><th>Channel</th><th>Route</th><th>Status</th><th>In</th><th>Out</th><th>USD</th><th>ms</th></tr></thead>
      <tbody>${(data?.data ?? []).map(
        (r) => html`<tr data-trace=${r.trace_id}>
          <td>${new Date(r.created_at).toLocaleString()}</td><td><code>${r.trace_id}</code></td><td>${r.key_id}</td><td>${shown(r.model)}</td><td>${r.channel}</td><td>${r.route}</td>
          <td>${r.status}</td><td>${r.input_units}</td><td>${r.output_units}</td><td>${r.cost_usd}</td><td>${r.latency_ms}</td>
          ${r.request_body || r.response_body
            ? html`<td><details><summary>bodies</summary><pre class="body">${shown(r.request_body)}</pre><pre class="body">${shown(r.response_body)}</pre></details></td>`
            : null}
        </tr>`,
      )}</tbody>
    </table>
    <${Pager} next=${data?.next_cursor} />
  `;
}
