import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminGateway, type AdminGateway } from './helpers/admin.js';

// The console and admin API behind a TLS-terminating reverse proxy (docs/deployment.md): every
// request arrives from the proxy's address. With server.trusted_proxies naming it, the login
// limit counts the failures of each real client (X-Forwarded-For), the audit log records that
// client, and the session cookie is Secure when the proxy says the request was https.

describe('admin API behind a trusted reverse proxy', () => {
  let gw: AdminGateway;
  beforeAll(async () => {
    // The test talks to the gateway from 127.0.0.1: that is the proxy here; 10.0.0.0/8 a second hop.
    gw = await startAdminGateway({ admin: { enabled: true, login_per_minute: 3 }, server: { host: '127.0.0.1', port: 0, trusted_proxies: ['127.0.0.1', '10.0.0.0/8'] } });
  });
  afterAll(async () => gw?.close());

  const BAD = `mga-${'x'.repeat(48)}`;
  const login = (token: string, headers: Record<string, string> = {}) =>
    fetch(`${gw.url}/admin/api/session`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ token }) });
  const from = (client: string, extra: Record<string, string> = {}) => ({ 'x-forwarded-for': client, 'x-forwarded-proto': 'https', ...extra });
  const auditIps = async (action: string) => (await gw.api('GET', '/admin/api/audit?limit=500')).body.data.filter((e: any) => e.action === action).map((e: any) => e.ip);

  it('limits failed logins per real client: one client guessing never locks out another', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await login(BAD, from('203.0.113.5'))).status);
    expect(statuses).toEqual([401, 401, 401, 429]);
    // Locked out: even the right token waits, so guessing cannot go on.
    const locked = await login(gw.token, from('203.0.113.5'));
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another operator behind the same proxy logs in.
    expect((await login(gw.token, from('203.0.113.6'))).status).toBe(200);
    expect(await auditIps('session.login_failed')).toEqual(['203.0.113.5', '203.0.113.5', '203.0.113.5']);
  });

  it('counts only failures: logging in again and again never locks an operator out', async () => {
    for (let i = 0; i < 6; i++) expect((await login(gw.token, from('203.0.113.7'))).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await login(BAD, from('203.0.113.7'))).status).toBe(401);
    expect((await login(gw.token, from('203.0.113.7'))).status).toBe(429);
  });

  it('reads X-Forwarded-For right to left: addresses the client wrote itself are never believed', async () => {
    // The client sent "X-Forwarded-For: 203.0.113.6" to pose as the operator above; the proxy appended its real address.
    expect((await login(BAD, from('203.0.113.6, 198.51.100.20'))).status).toBe(401);
    // Two proxies: 10.1.2.3 (trusted) passed on what the outer one saw.
    expect((await login(BAD, from('192.0.2.1, 198.51.100.21, 10.1.2.3'))).status).toBe(401);
    // An entry that is no address stops the walk at the hop that passed it on.
    expect((await login(BAD, from('not-an-ip, 10.1.2.4'))).status).toBe(401);
    const ips = await auditIps('session.login_failed');
    expect(ips.slice(0, 3)).toEqual(['10.1.2.4', '198.51.100.21', '198.51.100.20']);
  });

  it('records the real client in the audit log of every admin action', async () => {
    const res = await login(gw.token, from('203.0.113.8'));
    const cookie = res.headers.get('set-cookie')!.split(';')[0];
    const { csrf_token } = (await res.json()) as any;
    const made = await fetch(`${gw.url}/admin/api/keys`, { method: 'POST', headers: { cookie, 'x-csrf-token': csrf_token, 'content-type': 'application/json', ...from('203.0.113.8') }, body: JSON.stringify({ name: 'behind-proxy' }) });
    expect(made.status).toBe(201);
    expect((await auditIps('key.create'))[0]).toBe('203.0.113.8');
    expect((await auditIps('session.login'))[0]).toBe('203.0.113.8');
  });

  it('marks the session cookie Secure when the proxy says the request was https', async () => {
    const https = await login(gw.token, from('203.0.113.9'));
    expect(https.headers.get('set-cookie')).toMatch(/; Secure$/);
    const cookie = https.headers.get('set-cookie')!.split(';')[0];
    const { csrf_token } = (await https.json()) as any;
    const out = await fetch(`${gw.url}/admin/api/session`, { method: 'DELETE', headers: { cookie, 'x-csrf-token': csrf_token, ...from('203.0.113.9') } });
    expect(out.headers.get('set-cookie')).toMatch(/Max-Age=0; Secure$/);
    const plain = await login(gw.token, from('203.0.113.9', { 'x-forwarded-proto': 'http' }));
    expect(plain.headers.get('set-cookie')).not.toContain('Secure');
  });
});

describe('admin API without trusted proxies (the default)', () => {
  let gw: AdminGateway;
  beforeAll(async () => {
    gw = await startAdminGateway({ admin: { enabled: true } });
  });
  afterAll(async () => gw?.close());

  it('believes no X-Forwarded-* header: the connection is the client, plain HTTP is not Secure', async () => {
    const res = await fetch(`${gw.url}/admin/api/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': '203.0.113.50', 'x-forwarded-proto': 'https' },
      body: JSON.stringify({ token: gw.token }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('set-cookie')).not.toContain('Secure');
    const audit = await gw.api('GET', '/admin/api/audit?limit=10');
    expect(audit.body.data.find((e: any) => e.action === 'session.login').ip).toMatch(/^(::ffff:)?127\.0\.0\.1$/);
  });
});
