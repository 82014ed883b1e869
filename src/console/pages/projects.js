import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { html, useAction, useLoad, ErrorLine } from '../ui.js';
import { shown } from '../text.js';

// Projects: named groups of keys with a price ratio and a budget. Spend against budget is shown
// here and, per key, on the keys page.

const short = (usd) => `$${String(usd ?? '0').replace(/(\.\d\d\d*?)0+$/, '$1')}`;

/** "spent / budget per period" with a bar, the held part and the reset time; "—" without a budget. */
export function BudgetCell({ v }) {
  if (v.budget_usd === null) return html`<span class="budget-none">—</span>`;
  const used = Number(v.budget_spent_usd) + Number(v.budget_held_usd);
  const share = Number(v.budget_usd) > 0 ? Math.min(1, used / Number(v.budget_usd)) : 1;
  return html`<span class="budget">${short(v.budget_spent_usd)} / ${short(v.budget_usd)} per ${v.budget_period}</span>
    <br /><progress max="1" value=${share}></progress>${Number(v.budget_held_usd) ? html` <small>held ${short(v.budget_held_usd)}</small>` : ''}
    <br /><small>resets ${v.budget_resets_at}</small>`;
}

function CreateProject({ onCreated }) {
  const empty = { name: '', price_ratio: '', budget_usd: '', budget_period: 'month' };
  const [form, setForm] = useState(empty);
  const { error, act } = useAction();
  const set = (k) => (e) => setForm({ ...form, [k]: e.target.value });
  const submit = (e) => {
    e.preventDefault();
    act(async () => {
      const body = { name: form.name };
      if (form.price_ratio) body.price_ratio = Number(form.price_ratio);
      if (form.budget_usd) Object.assign(body, { budget_usd: form.budget_usd, budget_period: form.budget_period });
      await api('POST', '/projects', body);
      setForm(empty);
      onCreated();
    });
  };
  return html`
    <form class="inline" id="create-project" onSubmit=${submit}>
      <input name="name" placeholder="name" required value=${form.name} onInput=${set('name')} />
      <input name="price_ratio" placeholder="price ratio (1)" size="10" value=${form.price_ratio} onInput=${set('price_ratio')} />
      <input name="budget_usd" placeholder="budget USD (empty = none)" value=${form.budget_usd} onInput=${set('budget_usd')} />
      <select name="budget_period" value=${form.budget_period} onChange=${set('budget_period')}>
        <option value="day">per day</option><option value="week">per week</option><option value="month">per month</option>
      </select>
      <button type="submit">Create project</button>
    </form>
    <${ErrorLine} error=${error} />
  `;
}

export function Projects() {
  const [data, error, reload] = useLoad(() => api('GET', '/projects'));
  return html`
    <h1>Projects</h1>
    <${CreateProject} onCreated=${reload} />
    <${ErrorLine} error=${error} />
    <table id="projects">
      <thead><tr><th>Name</th><th>Keys</th><th>Price ratio</th><th>Spend / budget</th></tr></thead>
      <tbody>${(data?.data ?? []).map(
        (p) => html`<tr data-project=${p.name}>
          <td>${shown(p.name)}<br /><small>${p.id}</small></td><td>${p.keys}</td><td>${p.price_ratio}</td><td><${BudgetCell} v=${p} /></td>
        </tr>`,
      )}</tbody>
    </table>
  `;
}
