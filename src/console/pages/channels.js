import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { html, useLoad, ErrorLine } from '../ui.js';

const ms = (v) => (v === null ? '—' : `${v} ms`);
const pct = (r) => `${(r * 100).toFixed(1)}%`;

function TestButton({ name }) {
  const [result, setResult] = useState(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const test = async () => {
    setBusy(true);
    setError(null);
    try {
      setResult(await api('POST', `/channels/${encodeURIComponent(name)}/test`));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return html`<button type="button" class="test" disabled=${busy} onClick=${test}>${busy ? 'Testing…' : 'Test'}</button>
    ${result && html`<span class=${`test-result ${result.ok ? 'ok' : 'bad'}`}>${result.ok ? 'OK' : 'Failed'} · ${result.latency_ms} ms · ${result.message}</span>`}
    <${ErrorLine} error=${error} />`;
}

export function Channels() {
  const [data, error] = useLoad(() => api('GET', '/channels'));
  return html`
    <h1>Channels</h1>
    <${ErrorLine} error=${error} />
    <table id="channels">
      <thead><tr><th>Channel</th><th>Type</th><th>Breaker</th><th>Models</th><th>5 min: req / err / p50 / p99</th><th>60 min: req / err / p50 / p99</th><th></th></tr></thead>
      <tbody>${(data?.data ?? []).map(
        (c) => html`<tr data-channel=${c.name}>
          <td>${c.name}${c.enabled ? '' : ' (disabled)'}<br /><small>${c.base_url}</small></td><td>${c.type}</td><td class=${`breaker-${c.breaker}`}>${c.breaker}</td>
          <td><small>${c.models.join(', ')}</small></td>
          <td>${c.last_5m.requests} / ${pct(c.last_5m.error_rate)} / ${ms(c.last_5m.p50_ms)} / ${ms(c.last_5m.p99_ms)}</td>
          <td>${c.last_60m.requests} / ${pct(c.last_60m.error_rate)} / ${ms(c.last_60m.p50_ms)} / ${ms(c.last_60m.p99_ms)}</td>
          <td><${TestButton} name=${c.name} /></td>
        </tr>`,
      )}</tbody>
    </table>
  `;
}
