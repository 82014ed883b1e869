import { useEffect, useState } from 'preact/hooks';
import { api, qs } from '../api.js';
import { html, useLoad, ErrorLine, Clip, color } from '../ui.js';
import { StackedBars } from '../stacked.js';

// Who spent what, when: spend per key or model per hour or day over any range, stacked, with the
// totals below. A new grouping (a project) is one more entry in GROUPS once the API offers it.

const GROUPS = [
  ['model', 'by model'],
  ['key', 'by key'],
];
const REFRESH_MS = 30_000;

/** A Date as the value of an <input type="datetime-local"> (local time, minutes). */
const local = (d) => new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
const iso = (v) => (v ? new Date(v).toISOString() : '');

export function Spend() {
  const [form, setForm] = useState(() => ({ group: 'model', bucket: 'day', key: '', model: '', from: local(new Date(Date.now() - 7 * 86_400_000)), to: '' }));
  const [applied, setApplied] = useState(form);
  const [auto, setAuto] = useState(false);
  const [data, error, reload] = useLoad(
    () => api('GET', `/usage/series${qs({ group: applied.group, bucket: applied.bucket, key: applied.key.trim(), model: applied.model.trim(), from: iso(applied.from), to: iso(applied.to) })}`),
    [applied],
  );
  useEffect(() => {
    if (!auto) return undefined;
    const timer = setInterval(reload, REFRESH_MS);
    return () => clearInterval(timer);
  }, [auto, applied]);
  const set = (k) => (e) => setForm({ ...form, [k]: e.target.value });
  const apply = (e) => {
    e.preventDefault();
    setApplied({ ...form });
  };
  const label = (ts) => (data?.bucket === 'hour' ? new Date(ts).toLocaleString([], { month: 'numeric', day: 'numeric', hour: '2-digit', minute: '2-digit' }) : new Date(ts).toLocaleDateString());
  return html`
    <h1>Spend</h1>
    <form class="inline" id="spend-filter" onSubmit=${apply}>
      <select name="group" value=${form.group} onChange=${set('group')}>${GROUPS.map(([v, l]) => html`<option value=${v}>${l}</option>`)}</select>
      <select name="bucket" value=${form.bucket} onChange=${set('bucket')}><option value="hour">per hour</option><option value="day">per day</option></select>
      <label>From <input name="from" type="datetime-local" value=${form.from} onInput=${set('from')} /></label>
      <label>To <input name="to" type="datetime-local" value=${form.to} onInput=${set('to')} /></label>
      <input name="key" placeholder="key id (all keys)" value=${form.key} onInput=${set('key')} />
      <input name="model" placeholder="model (all models)" value=${form.model} onInput=${set('model')} />
      <button type="submit">Show</button>
      <label class="toggle"><input type="checkbox" id="auto-refresh" checked=${auto} onChange=${(e) => setAuto(e.target.checked)} /> refresh every 30 s</label>
    </form>
    <${ErrorLine} error=${error} />
    ${data &&
    html`
      <p class="hint">${new Date(data.from).toLocaleString()} – ${new Date(data.to).toLocaleString()}, UTC ${data.bucket}s</p>
      <${StackedBars} id="spend-chart" t=${data.t} series=${data.series.map((s) => ({ name: s.name, values: s.cost_usd }))} label=${label} />
      <table id="spend-legend">
        <thead><tr><th></th><th>${data.group === 'key' ? 'Key' : 'Model'}</th><th>Requests</th><th>USD</th></tr></thead>
        <tbody>${data.series.map(
          (s, i) => html`<tr data-name=${s.name}>
            <td><svg class="swatch" viewBox="0 0 10 10" width="12" height="12"><rect width="10" height="10" fill=${color(i)} /></svg></td>
            <td>${s.other ? s.name : html`<${Clip} text=${s.name} />`}</td><td>${s.total_requests}</td><td>${s.total_usd}</td>
          </tr>`,
        )}</tbody>
      </table>
    `}
  `;
}
