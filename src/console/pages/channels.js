import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import { html, useAction, useLoad, ErrorLine, fmtTime } from '../ui.js';
import { shown } from '../text.js';

// Channels: the config file's (read-only but for enabled) and those added at runtime, with their
// health. Credentials are write-only: the inputs start empty, an empty one keeps what is stored.

const ms = (v) => (v === null ? '—' : `${v} ms`);
const pct = (r) => `${(r * 100).toFixed(1)}%`;
const list = (s) => s.split(',').map((x) => x.trim()).filter(Boolean);
const EMPTY = { name: '', type: 'openai', base_url: '', api_key: '', api_secret: '', models: '', priority: '0', weight: '1', settings: '', test_interval_s: '' };
/** Whole numbers as numbers; anything else as typed, so the server's message names what is allowed. */
const num = (v) => (/^-?\d+$/.test(v.trim()) ? Number(v.trim()) : v.trim());
/** `k=v, k2=v2` as an object; an entry without `=` is kept whole, for the server to refuse by name. */
const settingsOf = (text) => Object.fromEntries(list(text).map((pair) => (pair.includes('=') ? [pair.slice(0, pair.indexOf('=')).trim(), pair.slice(pair.indexOf('=') + 1).trim()] : [pair, ''])));
const settingsText = (settings) => Object.entries(settings ?? {}).map(([k, v]) => `${k}=${v}`).join(', ');

/** The fields of a form as a channel body: empty text fields are left out (credentials: kept). */
function body(form, { withName, had }) {
  const out = {};
  if (withName) out.name = form.name.trim();
  if (form.type) out.type = form.type.trim();
  if (form.base_url.trim()) out.base_url = form.base_url.trim();
  if (form.api_key) out.api_key = form.api_key;
  if (form.api_secret) out.api_secret = form.api_secret;
  if (form.models.trim()) out.models = list(form.models);
  if (form.priority !== '') out.priority = num(form.priority);
  if (form.weight !== '') out.weight = num(form.weight);
  if (form.settings.trim()) out.settings = settingsOf(form.settings);
  else if (had?.settings) out.settings = null;
  if (form.test_interval_s.trim()) out.test_interval_s = num(form.test_interval_s);
  else if (had?.test_interval_s !== undefined) out.test_interval_s = null;
  return out;
}

function ChannelFields({ form, set, isNew, hasKey }) {
  return html`
    ${isNew && html`<input name="name" placeholder="name" required value=${form.name} onInput=${set('name')} />`}
    <input name="type" placeholder="type" size="10" value=${form.type} onInput=${set('type')} />
    <input name="base_url" placeholder="base URL" value=${form.base_url} onInput=${set('base_url')} />
    <input name="api_key" type="password" autocomplete="new-password" placeholder=${hasKey ? 'API key: set (empty keeps it)' : 'API key'} value=${form.api_key} onInput=${set('api_key')} />
    <input name="api_secret" type="password" autocomplete="new-password" placeholder="API secret (if the type needs one)" value=${form.api_secret} onInput=${set('api_secret')} />
    <input name="models" placeholder="models (a,b)" value=${form.models} onInput=${set('models')} />
    <input name="priority" placeholder="priority" size="4" value=${form.priority} onInput=${set('priority')} />
    <input name="weight" placeholder="weight" size="4" value=${form.weight} onInput=${set('weight')} />
    <input name="settings" placeholder="settings (k=v, …)" title="provider settings, e.g. balance=deepseek on an openai channel" value=${form.settings} onInput=${set('settings')} />
    <input name="test_interval_s" placeholder="test every (s)" size="8" title="seconds between scheduled tests (nothing billable); empty: the gateway's default; 0: none" value=${form.test_interval_s} onInput=${set('test_interval_s')} />
  `;
}

function AddChannel({ onAdded }) {
  const [form, setForm] = useState(EMPTY);
  const { error, act } = useAction();
  const set = (k) => (e) => setForm({ ...form, [k]: e.target.value });
  const submit = (e) => {
    e.preventDefault();
    act(async () => {
      await api('POST', '/channels', body(form, { withName: true }));
      setForm(EMPTY);
      onAdded();
    });
  };
  return html`<form class="inline" id="add-channel" onSubmit=${submit}>
      <${ChannelFields} form=${form} set=${set} isNew=${true} hasKey=${false} />
      <button type="submit">Add channel</button>
    </form>
    <${ErrorLine} error=${error} />`;
}

function TestButton({ name, onDone }) {
  const [result, setResult] = useState(null);
  const [busy, setBusy] = useState(false);
  const { error, act } = useAction();
  const test = async () => {
    setBusy(true);
    await act(async () => {
      setResult(await api('POST', `/channels/${encodeURIComponent(name)}/probe`));
      onDone();
    });
    setBusy(false);
  };
  return html`<button type="button" class="test" disabled=${busy} onClick=${test}>${busy ? 'Testing…' : 'Test'}</button>
    ${result && html`<span class=${`test-result ${result.ok ? 'ok' : 'bad'}`}>${result.ok ? 'OK' : 'Failed'} · ${result.probe} · ${result.status ?? '—'} · ${result.latency_ms} ms · ${result.message}</span>`}
    <${ErrorLine} error=${error} />`;
}

/** The provider's balance or quota, read when the channel has a balance read (kept a minute by the server). */
function Balance({ c }) {
  const [state, setState] = useState({ busy: false, answer: null, error: null });
  const read = async (refresh) => {
    setState((s) => ({ ...s, busy: true }));
    try {
      setState({ busy: false, answer: await api('GET', `/channels/${encodeURIComponent(c.name)}/balance${refresh ? '?refresh=true' : ''}`), error: null });
    } catch (err) {
      setState({ busy: false, answer: null, error: err });
    }
  };
  useEffect(() => {
    if (c.balance_read) void read(false);
  }, [c.name, c.balance_read]);
  if (!c.balance_read) return html`<td class="balance none" title="no balance or quota read is known for this provider">—</td>`;
  const a = state.answer;
  return html`<td class="balance">
    ${state.busy && !a && html`<small>reading…</small>`}
    ${a?.ok && a.balances.map((b) => html`<span class="amount" title=${b.label}>${b.amount.toLocaleString()} ${shown(b.unit)}</span><br />`)}
    ${a && !a.ok && html`<small class="last-error" title=${a.read}>${shown(a.message)}</small><br />`}
    ${state.error && html`<small class="last-error">${shown(state.error.message)}</small><br />`}
    ${a && html`<small title=${a.read}>${a.fetched_at ? fmtTime(a.fetched_at) : ''}</small>`}
    <button type="button" class="refresh-balance" title="read the balance again" disabled=${state.busy} onClick=${() => read(true)}>↻</button>
  </td>`;
}

function ChannelRow({ c, onChanged }) {
  const [mode, setMode] = useState(null);
  const { error, setError, act } = useAction();
  const initial = () => ({ ...EMPTY, type: c.type, base_url: c.base_url, models: c.models.join(','), priority: String(c.priority), weight: String(c.weight), settings: settingsText(c.settings), test_interval_s: c.test_interval_s === undefined ? '' : String(c.test_interval_s) });
  const [form, setForm] = useState(initial);
  const set = (k) => (e) => setForm({ ...form, [k]: e.target.value });
  const path = `/channels/${encodeURIComponent(c.name)}`;
  const run = (work) =>
    act(async () => {
      await work();
      setMode(null);
      onChanged();
    });
  const open = (next) => {
    // A reopened form starts from what is stored, never from a refused edit.
    setForm(initial());
    setError(null);
    setMode(mode === next ? null : next);
  };
  const h = c.health;
  return html`
    <tr data-channel=${c.name} data-source=${c.source}>
      <td>${shown(c.name)}<br /><small>${c.source === 'config' ? 'config file' : 'runtime'} · ${shown(c.base_url)}</small></td>
      <td>${shown(c.type)}<br /><small>${c.api_key ? 'key set' : 'no key'}</small></td>
      <td class="enabled">${c.enabled ? 'enabled' : 'disabled'}</td>
      <td class=${`health health-${h.state}`}>${h.state === 'out' ? 'out of rotation' : 'in rotation'}<br /><small>${h.cluster.requests} req · ${pct(h.cluster.error_rate)} err${h.out_since ? ` · since ${fmtTime(h.out_since)}` : ''}</small>
        ${h.last_error && html`<br /><small class="last-error" title=${fmtTime(h.last_error.at)}>${shown(h.last_error.message)}</small>`}
        ${c.problem && html`<br /><small class="last-error problem">${shown(c.problem)}</small>`}</td>
      <td class=${`breaker-${c.breaker}`}>${c.breaker}</td>
      <td><small>${c.models.map(shown).join(', ')}</small><br /><small>priority ${c.priority} · weight ${c.weight}${c.scheduled_test_s ? ` · tested every ${c.scheduled_test_s} s` : ''}</small></td>
      <td title="requests / error rate / p50 / p99 over the last 5 minutes">${c.last_5m.requests} req<br /><small>${pct(c.last_5m.error_rate)} err · p50 ${ms(c.last_5m.p50_ms)} · p99 ${ms(c.last_5m.p99_ms)}</small></td>
      <${Balance} c=${c} />
      <td class="actions">
        <${TestButton} name=${c.name} onDone=${onChanged} />
        <button type="button" class="toggle" onClick=${() => run(() => api('PATCH', path, { enabled: !c.enabled }))}>${c.enabled ? 'Disable' : 'Enable'}</button>
        ${c.source === 'api' &&
        html`<button type="button" class="edit" onClick=${() => open('edit')}>Edit</button>
          <button type="button" class="remove" onClick=${() => open('remove')}>Remove</button>`}
        ${mode === 'edit' &&
        html`<form class="inline edit-channel" onSubmit=${(e) => (e.preventDefault(), run(() => api('PATCH', path, body(form, { withName: false, had: c }))))}>
          <${ChannelFields} form=${form} set=${set} isNew=${false} hasKey=${Boolean(c.api_key)} />
          <button type="submit">Save</button>
        </form>`}
        ${mode === 'remove' && html`<button type="button" class="confirm-remove danger" onClick=${() => run(() => api('DELETE', path))}>Confirm remove</button>`}
        <${ErrorLine} error=${error} />
      </td>
    </tr>
  `;
}

export function Channels() {
  const [data, error, reload] = useLoad(() => api('GET', '/channels'));
  return html`
    <h1>Channels</h1>
    <p>Channels of the config file are read-only here but for Enable/Disable; channels added here reach every instance within 2 s.</p>
    <${AddChannel} onAdded=${reload} />
    <${ErrorLine} error=${error} />
    <table id="channels">
      <thead><tr><th>Channel</th><th>Type</th><th>State</th><th>Health</th><th>Breaker</th><th>Models</th><th title="requests, error rate, p50 and p99 over the last 5 minutes">Last 5 min</th><th>Balance</th><th></th></tr></thead>
      <tbody>${(data?.data ?? []).map((c) => html`<${ChannelRow} key=${`${c.name} ${c.enabled} ${c.priority} ${c.weight} ${c.base_url} ${c.models.join(",")} ${c.test_interval_s} ${JSON.stringify(c.settings)}`} c=${c} onChanged=${reload} />`)}</tbody>
    </table>
  `;
}
