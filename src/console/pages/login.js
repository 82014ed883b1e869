import { useState } from 'preact/hooks';
import { api, setCsrf } from '../api.js';
import { html, ErrorLine } from '../ui.js';

export function Login({ onLogin, notice }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState(null);
  const submit = async (e) => {
    e.preventDefault();
    try {
      const s = await api('POST', '/session', { token: token.trim() });
      setCsrf(s.csrf_token);
      setToken('');
      onLogin(s);
    } catch (err) {
      setError(err);
    }
  };
  return html`
    <form class="login" onSubmit=${submit}>
      <h1>mediagate console</h1>
      ${notice && html`<p class="notice" id="session-ended" role="status">${notice}</p>`}
      <label>Admin token <input id="token" type="password" autocomplete="off" placeholder="mga-…" value=${token} onInput=${(e) => setToken(e.target.value)} /></label>
      <button type="submit" id="login">Log in</button>
      <${ErrorLine} error=${error} />
      <p class="hint">Create a token with <code>mediagate admin create --name NAME</code>.</p>
    </form>
  `;
}
