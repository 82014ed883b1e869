import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminGateway, type AdminGateway } from './helpers/admin.js';

// The console's session: an admin token exchanged for an HttpOnly SameSite=Strict cookie; state
// changes need the CSRF token; logins are rate limited; every answer carries the strict headers.

describe('admin console session', () => {
  let gw: AdminGateway;
  beforeAll(async () => {
    gw = await startAdminGateway({ admin: { enabled: true, login_per_minute: 5 } });
  });
  afterAll(async () => gw?.close());

  const login = (token: string) => fetch(`${gw.url}/admin/api/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }) });

  it('logs in with a cookie and CSRF token, refuses state changes without the token, and logs out', async () => {
    const res = await login(gw.token);
    expect(res.status).toBe(200);
    const cookie = res.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^mediagate_admin=[A-Za-z0-9_-]{40,};/);
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Strict');
    expect(cookie).toMatch(/Max-Age=\d+/);
    expect(cookie).not.toContain('Secure'); // plain HTTP here; Secure when the request came over TLS
    const { csrf_token } = (await res.json()) as any;
    const session = cookie.split(';')[0];
    const me = await fetch(`${gw.url}/admin/api/session`, { headers: { cookie: session } });
    expect(await me.json()).toMatchObject({ name: 'tester', csrf_token });
    // A state-changing request with the cookie alone is refused, and nothing is created.
    const before = (await gw.services.keys.list()).length;
    const forged = await fetch(`${gw.url}/admin/api/keys`, { method: 'POST', headers: { cookie: session, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'csrf' }) });
    expect(forged.status).toBe(403);
    expect(((await forged.json()) as any).error.code).toBe('csrf_token_invalid');
    const wrong = await fetch(`${gw.url}/admin/api/keys`, { method: 'POST', headers: { cookie: session, 'x-csrf-token': 'x'.repeat(csrf_token.length), 'content-type': 'application/json' }, body: JSON.stringify({ name: 'csrf' }) });
    expect(wrong.status).toBe(403);
    expect((await gw.services.keys.list()).length).toBe(before);
    const made = await fetch(`${gw.url}/admin/api/keys`, { method: 'POST', headers: { cookie: session, 'x-csrf-token': csrf_token, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'csrf-ok' }) });
    expect(made.status).toBe(201);
    const out = await fetch(`${gw.url}/admin/api/session`, { method: 'DELETE', headers: { cookie: session, 'x-csrf-token': csrf_token } });
    expect(out.status).toBe(200);
    expect(out.headers.get('set-cookie')).toMatch(/Max-Age=0/);
    expect((await fetch(`${gw.url}/admin/api/keys`, { headers: { cookie: session } })).status).toBe(401);
  });

  it('ends the sessions of a revoked admin token', async () => {
    const res = await login(gw.token);
    const session = res.headers.get('set-cookie')!.split(';')[0];
    const extra = await gw.api('GET', '/admin/api/session');
    await gw.services.store.db.updateTable('admin_tokens').set({ revoked_at: Date.now() }).where('id', '=', extra.body.token_id).execute();
    expect((await fetch(`${gw.url}/admin/api/keys`, { headers: { cookie: session } })).status).toBe(401);
    await gw.services.store.db.updateTable('admin_tokens').set({ revoked_at: null }).where('id', '=', extra.body.token_id).execute();
  });

  it('refuses application keys and wrong tokens at login, and limits attempts per address', async () => {
    const { key } = await gw.createKey();
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await login(i % 2 ? key : `mga-${'x'.repeat(48)}`)).status);
    expect(statuses.slice(0, 3)).toEqual([401, 401, 401]);
    expect(statuses.at(-1)).toBe(429);
    const limited = await login(gw.token);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    const audit = await gw.api('GET', '/admin/api/audit?limit=500');
    expect(audit.body.data.some((e: any) => e.action === 'session.login_failed')).toBe(true);
    expect(JSON.stringify(audit.body)).not.toContain(key.slice(3));
  });

  it('sends a strict CSP, nosniff and no framing on the API and the console', async () => {
    for (const path of ['/admin/api/keys', '/console', '/admin/api/session']) {
      const res = await fetch(`${gw.url}${path}`);
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp, path).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe-inline');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('x-frame-options')).toBe('DENY');
    }
  });

  it('serves only the admin surface on a separate admin listener', async () => {
    const { buildApp } = await import('../src/app.js');
    const quiet = new (await import('node:stream')).Writable({ write: (_c, _e, cb) => cb() });
    const adminApp = buildApp(gw.services, { surface: 'admin', logStream: quiet });
    await adminApp.listen({ host: '127.0.0.1', port: 0 });
    try {
      const addr = adminApp.server.address();
      const url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
      const { key } = await gw.createKey();
      expect((await fetch(`${url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(404);
      expect((await fetch(`${url}/admin/api/keys`, { headers: { authorization: `Bearer ${gw.token}` } })).status).toBe(200);
      const publicOnly = buildApp(gw.services, { surface: 'public', logStream: quiet });
      const publicUrl = await publicOnly.listen({ host: '127.0.0.1', port: 0 });
      expect((await fetch(`${publicUrl}/admin/api/keys`, { headers: { authorization: `Bearer ${gw.token}` } })).status).toBe(404);
      await publicOnly.close();
    } finally {
      await adminApp.close();
    }
  });
});
