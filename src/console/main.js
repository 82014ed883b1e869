import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import 'uplot/dist/uPlot.min.css';
import './style.css';
import { api, onSessionEnded, setCsrf } from './api.js';
import { html } from './ui.js';
import { shown } from './text.js';
import { Login } from './pages/login.js';
import { Overview } from './pages/overview.js';
import { Keys } from './pages/keys.js';
import { Projects } from './pages/projects.js';
import { Usage } from './pages/usage.js';
import { Tasks, TaskPage } from './pages/tasks.js';
import { Channels } from './pages/channels.js';
import { ConfigPage } from './pages/config.js';
import { Audit } from './pages/audit.js';
import { Spend } from './pages/spend.js';
import { RequestLogs } from './pages/request-logs.js';

// A single-page app under /console with hash routes (#/keys, #/tasks/<id>): the server only ever
// serves index.html and the hashed bundle files.

const PAGES = [
  ['overview', 'Overview'],
  ['keys', 'Keys'],
  ['projects', 'Projects'],
  ['spend', 'Spend'],
  ['usage', 'Usage'],
  ['request-logs', 'Request logs'],
  ['tasks', 'Tasks'],
  ['channels', 'Channels'],
  ['config', 'Config'],
  ['audit', 'Audit'],
];

function useRoute() {
  const read = () => location.hash.replace(/^#\/?/, '').split('/');
  const [route, setRoute] = useState(read());
  useEffect(() => {
    const on = () => setRoute(read());
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return route;
}

function Page({ route }) {
  const [page, arg] = route;
  switch (page) {
    case 'keys':
      return html`<${Keys} />`;
    case 'projects':
      return html`<${Projects} />`;
    case 'spend':
      return html`<${Spend} />`;
    case 'usage':
      return html`<${Usage} />`;
    case 'request-logs':
      return html`<${RequestLogs} />`;
    case 'tasks':
      return arg ? html`<${TaskPage} id=${decodeURIComponent(arg)} />` : html`<${Tasks} />`;
    case 'channels':
      return html`<${Channels} />`;
    case 'config':
      return html`<${ConfigPage} />`;
    case 'audit':
      return html`<${Audit} />`;
    default:
      return html`<${Overview} />`;
  }
}

function App() {
  const [session, setSession] = useState(undefined);
  const [notice, setNotice] = useState(null);
  const route = useRoute();
  useEffect(() => {
    // The route lives in the URL's hash, which logging in again leaves alone: the operator lands where they were.
    onSessionEnded(() => {
      setCsrf(null);
      setNotice('Your session has ended. Log in again to go on where you were.');
      setSession(null);
    });
    api('GET', '/session').then(
      (s) => {
        setCsrf(s.csrf_token);
        setSession(s);
      },
      () => setSession(null),
    );
  }, []);
  if (session === undefined) return html`<p class="loading">Loading…</p>`;
  if (!session) return html`<${Login} notice=${notice} onLogin=${(s) => (setNotice(null), setSession(s))} />`;
  const logout = async () => {
    await api('DELETE', '/session').catch(() => undefined);
    setCsrf(null);
    setSession(null);
  };
  const current = route[0] || 'overview';
  return html`
    <header>
      <strong>mediagate</strong>
      <nav aria-label="Pages">${PAGES.map(([id, label]) => html`<a href=${`#/${id}`} class=${current === id ? 'active' : ''}>${label}</a>`)}</nav>
      <span class="who">${shown(session.name)}</span>
      <button type="button" id="logout" onClick=${logout}>Log out</button>
    </header>
    <main><${Page} route=${route} /></main>
  `;
}

render(html`<${App} />`, document.getElementById('app'));
