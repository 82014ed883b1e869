import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { html, useLoad, ErrorLine, Chart, Clip, color } from '../ui.js';

export function Overview() {
  const [range, setRange] = useState('hour');
  const [data, error] = useLoad(() => api('GET', `/overview?range=${range}`), [range]);
  return html`
    <h1>Overview</h1>
    <label>Range <select id="range" value=${range} onChange=${(e) => setRange(e.target.value)}>
      <option value="hour">Last hour</option><option value="day">Last day</option><option value="week">Last week</option>
    </select></label>
    <${ErrorLine} error=${error} />
    ${data &&
    html`
      <div class="cards">
        <div class="card"><span>Requests</span><b id="total-requests">${data.totals.requests}</b></div>
        <div class="card"><span>Errors</span><b>${data.totals.errors}</b></div>
        <div class="card"><span>Spend</span><b>$${Number(data.totals.cost_usd).toFixed(4)}</b></div>
        <div class="card"><span>Video tasks ended</span><b id="tasks-ended">${data.tasks_ended.reduce((a, b) => a + b, 0)}</b></div>
        <div class="card"><span>Open tasks</span><b>${data.totals.open_tasks}</b></div>
      </div>
      <div class="charts">
        <${Chart} id="chart-requests" title=${`Requests per minute`} t=${data.t} series=${[{ label: 'req/min', values: data.requests.map((n) => n / (data.bucket_s / 60)), color: color(0) }]} />
        <${Chart}
          id="chart-errors"
          title="Errors by status"
          t=${data.t}
          series=${Object.entries(data.errors).map(([status, values], i) => ({ label: status, values, color: color(i + 1) }))}
        />
        <${Chart} id="chart-latency" title="HTTP latency (ms)" t=${data.t} series=${[
          { label: 'p50', values: data.p50_ms, color: color(2) },
          { label: 'p99', values: data.p99_ms, color: color(1) },
        ]} />
        <${Chart} id="chart-spend" title="Spend (USD)" t=${data.t} series=${[{ label: 'USD', values: data.spend_usd, color: color(3) }]} />
        <${Chart} id="chart-task-duration" title="Video task duration (s), submit to end" t=${data.t} series=${[
          { label: 'p50', values: data.task_p50_s, color: color(2) },
          { label: 'p99', values: data.task_p99_s, color: color(1) },
        ]} />
        <${Chart} id="chart-tasks" title="Open video tasks" t=${data.t} series=${[{ label: 'open', values: data.open_tasks, color: color(4) }]} />
      </div>
      <h2>Spend by model</h2>
      <table id="spend-by-model">
        <thead><tr><th>Model</th><th>Requests</th><th>USD</th></tr></thead>
        <tbody>${data.spend_by_model.map((m) => html`<tr><td>${m.model ? html`<${Clip} text=${m.model} />` : '—'}</td><td>${m.requests}</td><td>${m.cost_usd}</td></tr>`)}</tbody>
      </table>
    `}
  `;
}
