import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { startAdminGateway, type AdminGateway } from './helpers/admin.js';
import { startReceiver, webhookHeaders } from './helpers/webhook-receiver.js';
import { errorShapeProblem } from './helpers/error-shapes.js';
import { eventually } from './helpers/chat.js';
import { newWebhookSecret } from '../src/tasks/webhooks/signing.js';

// Budgets and projects through the real routes: the admin API sets them up (audited), a budget
// refuses in each family's error shape with the reset time in a header, the price ratio shows in
// the ledger, and threshold alerts arrive signed so that `standardwebhooks` verifies them.

describe('budgets on the routes', () => {
  let gw: AdminGateway;
  let rx: Awaited<ReturnType<typeof startReceiver>>;
  const secret = newWebhookSecret();

  beforeAll(async () => {
    rx = await startReceiver();
    gw = await startAdminGateway({
      webhooks: { allow_insecure: true, tick_ms: 20, retry_delays_s: [0.05] },
      limits: { budget_alerts: { url: rx.url, secret } },
    });
  });
  afterAll(async () => {
    await gw?.close();
    await rx?.close();
  });

  const call = (path: string, key: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${gw.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

  it('manages projects over the admin API, with clear 400s and an audit row per change', async () => {
    const bad = await gw.api('POST', '/admin/api/projects', { name: 'x', budget_usd: '5', budget_period: 'year' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toBe('budget_period must be one of: day, week, month');
    expect((await gw.api('POST', '/admin/api/projects', { name: 'x', budget_usd: '5' })).body.error.message).toContain('a budget needs budget_period');
    expect((await gw.api('POST', '/admin/api/projects', { name: 'x', price_ratio: 'cheap' })).status).toBe(400);
    const made = await gw.api('POST', '/admin/api/projects', { name: 'team-a', price_ratio: 1.5, budget_usd: '12', budget_period: 'week' });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ name: 'team-a', price_ratio: 1.5, budget_usd: '12.000000', budget_period: 'week', budget_spent_usd: '0.000000', keys: 0 });
    expect((await gw.api('POST', '/admin/api/projects', { name: 'team-a' })).status).toBe(409);
    const patched = await gw.api('PATCH', `/admin/api/projects/${made.body.id}`, { budget_usd: null });
    expect(patched.body).toMatchObject({ budget_usd: null, budget_period: null, price_ratio: 1.5 });
    expect((await gw.api('GET', '/admin/api/projects/team-a')).body.id).toBe(made.body.id);
    expect((await gw.api('GET', '/admin/api/projects/nope')).status).toBe(404);
    expect((await gw.api('GET', '/admin/api/projects')).body.data.map((p: { name: string }) => p.name)).toContain('team-a');
    const k = await gw.createKey();
    const joined = await gw.api('PATCH', `/admin/api/keys/${k.id}`, { project: 'team-a', budget_usd: '3', budget_period: 'day' });
    expect(joined.body).toMatchObject({ project: 'team-a', budget_usd: '3.000000', budget_period: 'day' });
    expect((await gw.api('PATCH', `/admin/api/keys/${k.id}`, { project: 'ghost' })).body.error.message).toContain('no project named "ghost"');
    const audit = await gw.services.store.db.selectFrom('audit_log').select(['action', 'target']).execute();
    expect(audit.map((a) => a.action)).toEqual(expect.arrayContaining(['project.create', 'project.update', 'key.update']));
  });

  it('refuses with 402 budget_exceeded in every family, naming the reset time (also as X-Budget-Reset)', async () => {
    const k = await gw.createKey();
    await gw.api('PATCH', `/admin/api/keys/${k.id}`, { budget_usd: '0', budget_period: 'month' });
    const now = new Date();
    const reset = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString().replace('.000Z', 'Z');
    const tries: [string, 'openai' | 'anthropic' | 'gemini' | 'video', unknown, Record<string, string>][] = [
      ['/v1/chat/completions', 'openai', { model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }] }, {}],
      ['/v1/messages', 'anthropic', { model: 'sim-claude', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] }, { 'anthropic-version': '2023-06-01' }],
      ['/v1beta/models/sim-chat:generateContent', 'gemini', { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }, {}],
      ['/v1/video/generations', 'video', { model: 'sim-video', prompt: 'a corgi' }, {}],
      ['/v1/images/generations', 'openai', { model: 'sim-image', prompt: 'a corgi' }, {}],
    ];
    for (const [path, family, body, headers] of tries) {
      const res = await call(path, k.key, body, headers);
      const answer = (await res.json()) as any;
      expect(res.status, path).toBe(402);
      expect(errorShapeProblem(family, answer), path).toBeNull();
      expect(res.headers.get('x-budget-reset'), path).toBe(reset);
      expect(JSON.stringify(answer), path).toContain(`resets at ${reset}`);
      if (family === 'openai') expect(answer.error).toMatchObject({ code: 'budget_exceeded', type: 'insufficient_quota' });
      if (family === 'anthropic') expect(answer.error.type).toBe('billing_error');
      if (family === 'gemini') expect(answer.error).toMatchObject({ code: 402, status: 'FAILED_PRECONDITION' });
      if (family === 'video') expect(answer.code).toBe('budget_exceeded');
    }
    // Each refusal is one ledger row, charged nothing.
    await gw.services.ledger.flush();
    const rows = await gw.services.store.db.selectFrom('usage').select(['status', 'cost_micros']).where('key_id', '=', k.id).execute();
    expect(rows).toHaveLength(tries.length);
    expect(rows.every((r) => Number(r.status) === 402 && Number(r.cost_micros) === 0)).toBe(true);
  });

  it('charges the project ratio, stops at the budget and sends each threshold crossed once, signed', async () => {
    const prj = await gw.api('POST', '/admin/api/projects', { name: 'images', price_ratio: 1.5, budget_usd: '0.095', budget_period: 'day' });
    const k = await gw.createKey();
    await gw.api('PATCH', `/admin/api/keys/${k.id}`, { project: 'images' });
    // $0.02 an image × 1.5 = $0.03: three fit in $0.095, the fourth does not.
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await call('/v1/images/generations', k.key, { model: 'sim-image', prompt: `corgi ${i}` })).status);
    expect(statuses).toEqual([200, 200, 200, 402]);
    await gw.services.ledger.flush();
    const costs = await gw.services.store.db.selectFrom('usage').select('cost_micros').where('key_id', '=', k.id).where('status', '=', 200).execute();
    expect(costs.map((c) => Number(c.cost_micros))).toEqual([30_000, 30_000, 30_000]);
    // The prices the key reads are the prices it pays.
    const model = (await (await fetch(`${gw.url}/v1/models/sim-image`, { headers: { authorization: `Bearer ${k.key}` } })).json()) as any;
    expect(model.pricing).toMatchObject({ currency: 'USD', per_image: 0.03 });
    const view = await gw.api('GET', `/admin/api/projects/${prj.body.id}`);
    expect(view.body).toMatchObject({ budget_spent_usd: '0.090000', budget_held_usd: '0.000000', keys: 1 });
    // 90 / 95 = 94.7 %: the 50 % and 80 % alerts from the spend, and the 100 % alert because the
    // budget refused the fourth request; one delivery each, also after another refusal.
    expect((await call('/v1/images/generations', k.key, { model: 'sim-image', prompt: 'corgi again' })).status).toBe(402);
    await eventually(() => rx.received.length >= 3, 10_000, 'three budget alerts');
    await new Promise((r) => setTimeout(r, 300));
    expect(rx.received).toHaveLength(3);
    const events = rx.received.map((h) => new Webhook(secret).verify(h.body, webhookHeaders(h.headers)) as { type: string; data: Record<string, unknown> });
    expect(events.map((e) => [e.data.threshold_percent, e.data.trigger]).sort((a, b) => Number(a[0]) - Number(b[0]))).toEqual([
      [50, 'spent'],
      [80, 'spent'],
      [100, 'refused'],
    ]);
    for (const e of events) expect(e).toMatchObject({ type: 'budget.threshold', data: { scope: 'project', name: 'images', project_id: prj.body.id, key_id: k.id, budget_usd: 0.095, period: 'day' } });
    expect(events.find((e) => e.data.trigger === 'refused')!.data).toMatchObject({ spent_usd: 0.09, held_usd: 0, requested_usd: 0.03 });
    expect(() => new Webhook(newWebhookSecret()).verify(rx.received[0].body, webhookHeaders(rx.received[0].headers))).toThrow();
  });
});
