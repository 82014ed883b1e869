import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminGateway, type AdminGateway } from './helpers/admin.js';

// /admin/api/keys: create (the key shown once), list with cursor pages, change, top up, revoke;
// application keys and admin tokens each refused where the other belongs.

describe('admin API: keys', () => {
  let gw: AdminGateway;
  beforeAll(async () => {
    gw = await startAdminGateway();
  });
  afterAll(async () => gw?.close());

  it('refuses an application key, no credential, and answers in the admin error shape', async () => {
    const { key } = await gw.createKey();
    for (const headers of [{ authorization: `Bearer ${key}` }, {} as Record<string, string>, { authorization: 'Bearer mga-short' }]) {
      const res = await fetch(`${gw.url}/admin/api/keys`, { headers });
      expect(res.status).toBe(401);
      const body = await res.json();
      expect(body).toEqual({ error: { code: 'invalid_admin_token', message: expect.any(String) } });
      expect(JSON.stringify(body)).not.toContain(key.slice(3));
    }
  });

  it('refuses an admin token on the model endpoints', async () => {
    const res = await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${gw.token}` } });
    expect(res.status).toBe(401);
    expect(await res.text()).not.toContain(gw.token.slice(4));
  });

  it('creates a key shown once that works on the model endpoints; lists never show it', async () => {
    const made = await gw.api('POST', '/admin/api/keys', { name: 'app-a', models: ['sim-chat'], rpm: 60, concurrency: 2, credit_usd: '5' });
    expect(made.status).toBe(201);
    expect(made.body.key).toMatch(/^mg-[0-9A-Za-z]{48}$/);
    expect(made.body).toMatchObject({ name: 'app-a', models: ['sim-chat'], rpm: 60, concurrency: 2, credit_usd: '5.000000', held_usd: '0.000000', status: 'active' });
    const models = await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${made.body.key}` } });
    expect(models.status).toBe(200);
    const list = await gw.api('GET', '/admin/api/keys?limit=1000');
    expect(list.status).toBe(200);
    expect(list.body.data.some((k: any) => k.id === made.body.id)).toBe(true);
    expect(JSON.stringify(list.body)).not.toContain(made.body.key.slice(10));
    const one = await gw.api('GET', `/admin/api/keys/${made.body.id}`);
    expect(one.body.prefix).toBe(`${made.body.key.slice(0, 9)}…`);
    expect(one.body.key).toBeUndefined();
  });

  it('pages keys with a cursor, each key once', async () => {
    for (let i = 0; i < 5; i++) expect((await gw.api('POST', '/admin/api/keys', { name: `page-${i}` })).status).toBe(201);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await gw.api('GET', `/admin/api/keys?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status).toBe(200);
      expect(page.body.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.data.map((k: any) => k.id));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.length).toBe((await gw.services.keys.list()).length);
    expect((await gw.api('GET', '/admin/api/keys?cursor=garbage')).status).toBe(400);
    expect((await gw.api('GET', '/admin/api/keys?q=page-3')).body.data.map((k: any) => k.name)).toEqual(['page-3']);
  });

  it('changes name, models, limits and expiry; refuses bad values and unknown ids', async () => {
    const made = await gw.api('POST', '/admin/api/keys', { name: 'to-edit' });
    const id = made.body.id;
    const patched = await gw.api('PATCH', `/admin/api/keys/${id}`, { name: 'edited', models: ['sim-chat', 'sim-image'], rpm: 5, concurrency: 1, expires_at: '2099-01-01T00:00:00Z' });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ name: 'edited', models: ['sim-chat', 'sim-image'], rpm: 5, concurrency: 1, expires_at: '2099-01-01T00:00:00.000Z' });
    const cleared = await gw.api('PATCH', `/admin/api/keys/${id}`, { models: null, expires_at: null });
    expect(cleared.body).toMatchObject({ name: 'edited', models: null, expires_at: null, rpm: 5 });
    for (const bad of [{ rpm: -1 }, { models: ['nope'] }, { expires_at: 'tomorrow' }, { name: '' }, { credit_usd: '5' }, { key_hash: 'x' }]) {
      const r = await gw.api('PATCH', `/admin/api/keys/${id}`, bad);
      expect(r.status, JSON.stringify(bad)).toBe(400);
      expect(r.body.error.code).toBe('invalid_request');
    }
    expect((await gw.api('PATCH', '/admin/api/keys/key_missing', { rpm: 1 })).status).toBe(404);
    // A limit as the console sends it (the text typed): each bad one named with its range, not a schema's generic words.
    for (const [field, value] of [['rpm', '-5'], ['rpm', 'abc'], ['rpm', 1.5], ['concurrency', '1e3'], ['rpm', true], ['concurrency', 2_000_000_000]] as const) {
      const r = await gw.api('PATCH', `/admin/api/keys/${id}`, { [field]: value });
      expect(r.status, `${field}=${String(value)}`).toBe(400);
      expect(r.body.error.message).toBe(`${field} must be a whole number from 0 (no limit) to 1000000000 (got ${JSON.stringify(value)})`);
      const created = await gw.api('POST', '/admin/api/keys', { name: 'bad-limit', [field]: value });
      expect(created.body.error.message).toMatch(new RegExp(`^${field} must be a whole number from 0 \\(no limit\\) to 1000000000`));
    }
    expect((await gw.api('PATCH', `/admin/api/keys/${id}`, { rpm: '12', concurrency: ' 3 ' })).body).toMatchObject({ rpm: 12, concurrency: 3 });
    // An expiry in the past takes the key out of service at once.
    const { key } = (await gw.api('POST', '/admin/api/keys', { name: 'expiring' })).body;
    const kid = (await gw.api('GET', '/admin/api/keys?q=expiring')).body.data[0].id;
    await gw.api('PATCH', `/admin/api/keys/${kid}`, { expires_at: '2001-01-01T00:00:00Z' });
    expect((await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(401);
  });

  it('tops up and takes credit with signed amounts, never below zero', async () => {
    const made = await gw.api('POST', '/admin/api/keys', { name: 'wallet', credit_usd: '1' });
    const id = made.body.id;
    expect((await gw.api('POST', `/admin/api/keys/${id}/credit`, { usd: '+10' })).body.credit_usd).toBe('11.000000');
    expect((await gw.api('POST', `/admin/api/keys/${id}/credit`, { usd: '-2.5' })).body.credit_usd).toBe('8.500000');
    const tooMuch = await gw.api('POST', `/admin/api/keys/${id}/credit`, { usd: '-9' });
    expect(tooMuch.status).toBe(409);
    expect((await gw.api('GET', `/admin/api/keys/${id}`)).body.credit_usd).toBe('8.500000');
    for (const usd of ['ten', '+', '0', '1e3', '+1.1234567']) expect((await gw.api('POST', `/admin/api/keys/${id}/credit`, { usd })).status, usd).toBe(400);
    const unlimited = (await gw.api('POST', '/admin/api/keys', { name: 'unlimited' })).body.id;
    expect((await gw.api('POST', `/admin/api/keys/${unlimited}/credit`, { usd: '+1' })).status).toBe(409);
    expect((await gw.api('POST', '/admin/api/keys/key_missing/credit', { usd: '+1' })).status).toBe(404);
  });

  it('revokes a key: it stops working at once; a second revoke is a conflict', async () => {
    const made = await gw.api('POST', '/admin/api/keys', { name: 'doomed' });
    const ok = await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${made.body.key}` } });
    expect(ok.status).toBe(200);
    const revoked = await gw.api('POST', `/admin/api/keys/${made.body.id}/revoke`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.status).toBe('revoked');
    expect((await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${made.body.key}` } })).status).toBe(401);
    expect((await gw.api('POST', `/admin/api/keys/${made.body.id}/revoke`)).status).toBe(409);
    expect((await gw.api('POST', '/admin/api/keys/key_missing/revoke')).status).toBe(404);
  });

  it('refuses a second active key of one name unless asked', async () => {
    expect((await gw.api('POST', '/admin/api/keys', { name: 'twin' })).status).toBe(201);
    expect((await gw.api('POST', '/admin/api/keys', { name: 'twin' })).status).toBe(409);
    expect((await gw.api('POST', '/admin/api/keys', { name: 'twin', allow_duplicate_name: true })).status).toBe(201);
  });

  it('writes every change to the audit log, without the key', async () => {
    const made = await gw.api('POST', '/admin/api/keys', { name: 'audited' });
    await gw.api('POST', `/admin/api/keys/${made.body.id}/revoke`);
    const audit = await gw.api('GET', '/admin/api/audit?limit=500');
    expect(audit.status).toBe(200);
    const mine = audit.body.data.filter((e: any) => e.target === made.body.id);
    expect(mine.map((e: any) => e.action)).toEqual(['key.revoke', 'key.create']);
    expect(mine[0].actor).toMatch(/^tester \(adm_/);
    expect(JSON.stringify(audit.body)).not.toContain(made.body.key.slice(10));
  });

  it('is described in /openapi.json', async () => {
    const doc: any = await (await fetch(`${gw.url}/openapi.json`)).json();
    for (const p of ['/admin/api/keys', '/admin/api/keys/{id}/credit', '/admin/api/usage', '/admin/api/tasks/{id}', '/admin/api/channels/{name}/test', '/admin/api/config', '/admin/api/reload', '/admin/api/audit']) {
      expect(Object.keys(doc.paths), p).toContain(p);
    }
  });
});
