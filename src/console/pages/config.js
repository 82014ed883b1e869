import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { html, useLoad, ErrorLine } from '../ui.js';

export function ConfigPage() {
  const [data, error, reload] = useLoad(() => api('GET', '/config'));
  const [outcome, setOutcome] = useState(null);
  const doReload = async () => {
    try {
      await api('POST', '/reload');
      setOutcome({ ok: true, message: 'Reloaded.' });
      reload();
    } catch (err) {
      setOutcome({ ok: false, message: err.message });
    }
  };
  return html`
    <h1>Configuration</h1>
    <p>Read-only; every secret is masked. <button type="button" id="reload" onClick=${doReload}>Reload config file</button>
      ${outcome && html`<span class=${outcome.ok ? 'ok' : 'error'}>${outcome.message}</span>`}</p>
    <${ErrorLine} error=${error} />
    ${data && html`<pre id="config">${JSON.stringify(data, null, 2)}</pre>`}
  `;
}
