import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'node:http';
import { startAdminGateway, type AdminGateway } from './helpers/admin.js';

// Every answer of the admin API and console carries Cache-Control: no-store, errors included: the
// 201 of a new key holds the key itself, and no browser or proxy cache may keep it.

describe('admin answers are never cached', () => {
  let gw: AdminGateway;
  beforeAll(async () => {
    gw = await startAdminGateway({ admin: { enabled: true }, server: { host: '127.0.0.1', port: 0, body_limit_mb: 0.01 } });
  });
  afterAll(async () => gw?.close());

  const noStore = (res: { status: number; headers: Headers }, what: string) => expect(res.headers.get('cache-control'), `${what} (${res.status})`).toBe('no-store');

  it('on the answers that carry keys and account data', async () => {
    const made = await gw.api('POST', '/admin/api/keys', { name: 'cached?' });
    expect(made.status).toBe(201);
    expect(made.body.key).toMatch(/^mg-/);
    noStore(made, 'new key');
    for (const path of ['/admin/api/keys', `/admin/api/keys/${made.body.id}`, '/admin/api/session', '/admin/api/usage', '/admin/api/usage?format=csv', '/admin/api/audit', '/admin/api/config', '/admin/api/overview', '/console']) {
      const res = await gw.api('GET', path);
      expect(res.status, path).toBe(200);
      noStore(res, path);
    }
    const login = await fetch(`${gw.url}/admin/api/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: gw.token }) });
    expect(login.status).toBe(200);
    noStore(login, 'login');
  });

  it('on every error, whether a route, the router or a request guard answers it', async () => {
    const answers = [
      ['no token', await fetch(`${gw.url}/admin/api/keys`)],
      ['bad login', await fetch(`${gw.url}/admin/api/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: 'nope' }) })],
      ['schema', await fetch(`${gw.url}/admin/api/keys`, { method: 'POST', headers: { authorization: `Bearer ${gw.token}`, 'content-type': 'application/json' }, body: '{"name": 5}' })],
      ['unknown key', await fetch(`${gw.url}/admin/api/keys/key_nope`, { headers: { authorization: `Bearer ${gw.token}` } })],
      ['unknown path', await fetch(`${gw.url}/admin/api/nope`, { headers: { authorization: `Bearer ${gw.token}` } })],
      ['wrong method', await fetch(`${gw.url}/admin/api/keys`, { method: 'PUT', headers: { authorization: `Bearer ${gw.token}` } })],
      ['bad encoding', await fetch(`${gw.url}/admin/api/keys/%zz`, { headers: { authorization: `Bearer ${gw.token}` } })],
      ['too large', await fetch(`${gw.url}/admin/api/keys`, { method: 'POST', headers: { authorization: `Bearer ${gw.token}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'x'.repeat(20_000) }) })],
    ] as const;
    for (const [what, res] of answers) {
      expect(res.status, what).toBeGreaterThanOrEqual(400);
      expect(((await res.json()) as any).error.code, what).toEqual(expect.any(String));
      noStore(res, what);
    }
  });

  it('on a request Node cannot parse, sent to an admin path', async () => {
    const { port } = new URL(gw.url);
    const head = await new Promise<string>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: '/admin/api/keys', headers: { 'x-big': 'y'.repeat(20_000) } }, (res) => {
        res.resume();
        resolve(`${res.statusCode} ${res.headers['cache-control']}`);
      });
      req.on('error', reject);
      req.end();
    });
    expect(head).toBe('431 no-store');
  });

  it('but not on the model endpoints', async () => {
    const { key } = await gw.createKey();
    const res = await fetch(`${gw.url}/v1/video/generations/task_nope`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(404);
    expect(res.headers.get('cache-control')).toBeNull();
  });
});
