import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import * as full from 'undici';
import { Agent, buildConnector, errors, request, util } from '../../src/upstream/undici.js';

// src/upstream/undici.ts loads only the part of undici the gateway uses (not its index, which
// brings fetch, WebSocket, the cache, the mocks). What it exports must be undici's own, and the
// serving process must not load the rest after all (docs/benchmarks.md, "Memory").

describe('the undici subset', () => {
  let server: Server;
  let base = '';
  const seen: { method: string; url: string; body: string }[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += String(c)));
      req.on('end', () => {
        seen.push({ method: req.method!, url: req.url!, body });
        res.writeHead(200, { 'content-type': 'text/plain', 'x-one': 'a' }).end(`${req.method} ${req.url}`);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const a = server.address();
    base = `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`;
  });
  afterAll(async () => {
    await new Promise<void>((r) => server.close(() => r()));
  });

  it('exports the very classes and functions of undici’s index', () => {
    expect(Agent).toBe(full.Agent);
    expect(errors).toBe(full.errors);
    expect(buildConnector).toBe(full.buildConnector);
    expect(util.parseHeaders).toBe(full.util.parseHeaders);
    expect(util.headerNameToString).toBe(full.util.headerNameToString);
    expect(new errors.HeadersTimeoutError()).toBeInstanceOf(full.errors.HeadersTimeoutError);
  });

  it('request() splits the URL, keeps the query, defaults the method and uses the given dispatcher', async () => {
    const agent = new Agent();
    let dispatched = 0;
    const counting = agent.compose((dispatch) => (opts, handler) => {
      dispatched++;
      return dispatch(opts, handler);
    });
    try {
      const get = await request(`${base}/a/b?x=1&y=2`, { dispatcher: counting });
      expect(get.statusCode).toBe(200);
      expect(get.headers['x-one']).toBe('a');
      expect(await get.body.text()).toBe('GET /a/b?x=1&y=2');
      const put = await request(new URL(`${base}/put`), { dispatcher: counting, body: 'hello' });
      expect(await put.body.text()).toBe('PUT /put');
      const post = await request(`${base}/post`, { dispatcher: counting, method: 'POST', body: 'x' });
      expect(await post.body.text()).toBe('POST /post');
      expect(dispatched).toBe(3);
      expect(seen.slice(-3)).toEqual([
        { method: 'GET', url: '/a/b?x=1&y=2', body: '' },
        { method: 'PUT', url: '/put', body: 'hello' },
        { method: 'POST', url: '/post', body: 'x' },
      ]);
      // Without a dispatcher: undici's global one, as with the index's request().
      const global = await request(`${base}/global`);
      expect(await global.body.text()).toBe('GET /global');
      // A bad URL fails as it does in the index's request(): synchronously, with the same error.
      const thrown = (call: () => unknown): string => {
        try {
          call();
        } catch (err) {
          return `${(err as Error).name}: ${(err as Error).message}`;
        }
        return 'nothing thrown';
      };
      expect(thrown(() => request('not a url', { dispatcher: agent }))).toBe(thrown(() => full.request('not a url', { dispatcher: agent })));
      expect(thrown(() => request('not a url', { dispatcher: agent }))).not.toBe('nothing thrown');
    } finally {
      await agent.close();
    }
  });

  it('the serving code loads neither undici’s index (fetch, WebSocket, cache) nor the simulator', () => {
    // Every module `mediagate serve` imports up front, in a fresh process; the ES modules it
    // loaded are logged by a loader hook, the CommonJS ones are in require.cache.
    const root = join(__dirname, '..', '..');
    const script = `
      import { createRequire, register } from 'node:module';
      import { MessageChannel } from 'node:worker_threads';
      const { port1, port2 } = new MessageChannel();
      const loaded = [];
      port1.on('message', (u) => loaded.push(u));
      port1.unref();
      register('data:text/javascript,' + encodeURIComponent('let p; export function initialize(d) { p = d.port; } export async function load(u, c, n) { p.postMessage(u); return n(u, c); }'), { data: { port: port2 }, transferList: [port2] });
      await import(${JSON.stringify(join(root, 'dist', 'main.js'))});
      await new Promise((r) => setTimeout(r, 200));
      const cjs = Object.keys(createRequire(import.meta.url).cache);
      process.stdout.write(JSON.stringify([...loaded, ...cjs]));
    `;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' });
    const files: string[] = JSON.parse(out);
    expect(files.some((f) => f.includes('/dist/upstream/client.js'))).toBe(true);
    expect(files.some((f) => f.includes('/undici/lib/dispatcher/agent.js'))).toBe(true);
    expect(files.filter((f) => /\/undici\/index\.js$|\/undici\/lib\/web\//.test(f))).toEqual([]);
    expect(files.filter((f) => f.includes('/dist/simulator/'))).toEqual([]);
  });
});
