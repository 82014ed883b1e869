import { api, qs } from '../api.js';
import { html, useLoad, usePages, ErrorLine, fmtTime } from '../ui.js';
import { shown } from '../text.js';

export function Audit() {
  const { cursor, Pager } = usePages();
  const [data, error] = useLoad(() => api('GET', `/audit${qs({ cursor, limit: 100 })}`), [cursor]);
  return html`
    <h1>Audit log</h1>
    <${ErrorLine} error=${error} />
    <table id="audit">
      <thead><tr><th>When</th><th>Who</th><th>Action</th><th>Target</th><th>Detail</th><th>From</th></tr></thead>
      <tbody>${(data?.data ?? []).map((e) => html`<tr><td>${fmtTime(e.at)}</td><td>${shown(e.actor)}</td><td>${e.action}</td><td>${shown(e.target)}</td><td><small>${shown(JSON.stringify(e.detail))}</small></td><td>${e.ip}</td></tr>`)}</tbody>
    </table>
    <${Pager} next=${data?.next_cursor} />
  `;
}
