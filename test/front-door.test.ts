import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { startGateway, usageRowsOf, type KeyOptions, type TestGateway } from './helpers/gateway.js';
import { eventually } from './helpers/eventually.js';
import { freshRedisPrefix } from './helpers/redis.js';
import { rawRequest, buildRequest } from './helpers/raw-http.js';
import { SEEDANCE_MODELS, SIMULATOR_MODELS } from '../src/config-file/defaults.js';
import { generateApiKey } from '../src/auth/keys.js';
import { createTask, isFinished, waitForTask } from './helpers/video.js';

// The front door (src/front-door.ts) serves the plain form of GET /v1/models, POST
// /v1/chat/completions and GET /v1/video/generations/{id} straight from node:http; Fastify serves every other form. Each case here is
// sent three ways, each with its own key of the same options: over HTTP to the exact path (the
// front door), with app.inject() (Fastify's routing, never the front door), and over HTTP with a
// query string (Fastify over a real socket, for the connection header). The answers must match:
// status, JSON body, content type, rate-limit headers, `connection: close`, and the ledger rows.
// Once with limits kept in memory (admitted synchronously) and once in Redis (through promises).

type Door = 'front' | 'inject' | 'fastify';
const DOORS: Door[] = ['front', 'inject', 'fastify'];

interface Answer {
  status: number;
  headers: Record<string, string | undefined>;
  text: string;
}

const RPM_MODEL = 'sim-chat-rpm1';

describe.each(['memory', 'redis'] as const)('the front door answers as Fastify does (%s limits)', (backend) => {
  let gw: TestGateway;
  const redis = backend === 'redis' ? freshRedisPrefix() : null;
  let port: number;
  // Keep-alive, so the server's `connection: close` is its own decision, not an echo of the client's.
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });

  beforeAll(async () => {
    const models = { ...SIMULATOR_MODELS, ...SEEDANCE_MODELS, [RPM_MODEL]: { ...SIMULATOR_MODELS['sim-chat'], rpm: 1 } };
    gw = await startGateway({ ...(redis ? { redis: redis.config } : {}), models, channels: [{ name: 'simulator', type: 'simulator', models: Object.keys(models) }] });
    port = Number(new URL(gw.url).port);
  });
  afterAll(async () => {
    agent.destroy();
    await gw?.close();
    await redis?.cleanup();
  });

  const served = () => gw.app.frontDoor.served();

  function overHttp(method: string, target: string, headers: Record<string, string>, body?: string | Buffer, chunked = false): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, method, path: target, headers, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers as Record<string, string | undefined>, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      req.on('error', reject);
      if (body !== undefined && chunked) {
        // No Content-Length: node:http frames the body with Transfer-Encoding: chunked.
        const half = Math.floor(body.length / 2);
        if (typeof body !== 'string') throw new Error('chunked bodies are strings here');
        req.write(body.slice(0, half));
        req.end(body.slice(half));
      } else req.end(body);
    });
  }

  async function send(door: Door, method: string, path: string, headers: Record<string, string>, body?: string | Buffer): Promise<Answer> {
    if (door === 'inject') {
      const res = await gw.app.inject({ method: method as 'GET' | 'POST', url: path, headers, ...(body !== undefined ? { payload: body } : {}) });
      return { status: res.statusCode, headers: res.headers as Record<string, string | undefined>, text: res.body };
    }
    return overHttp(method, door === 'fastify' ? `${path}${path.includes('?') ? '&' : '?'}door=fastify` : path, headers, body);
  }

  const closes = (a: Answer) => a.headers.connection === 'close';
  const ROW_FIELDS = ['endpoint', 'model', 'status', 'channel', 'input_units', 'output_units', 'cost_micros'] as const;
  const rowsOf = async (keyId: string) => (await usageRowsOf(gw.services, keyId)).map((r) => Object.fromEntries(ROW_FIELDS.map((f) => [f, f === 'cost_micros' ? Number(r[f]) : r[f]])));
  /** A key's rows once there are `n` (a refusal's row is written when its response has finished). */
  async function rowsWhen(keyId: string, n: number) {
    await eventually(async () => (await rowsOf(keyId)).length >= n, 15_000, `${n} ledger rows`);
    return rowsOf(keyId);
  }
  const allRows = async () => {
    await gw.services.ledger.flush();
    return Number((await gw.services.store.db.selectFrom('usage').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
  };

  /** The error answers of two doors: same status, same parsed body, same headers that matter. */
  function expectSameAnswer(front: Answer, other: Answer, door: Door) {
    const what = `${door} vs front`;
    expect(other.status, what).toBe(front.status);
    expect(other.headers['content-type'], what).toBe(front.headers['content-type']);
    expect(JSON.parse(other.text), what).toEqual(JSON.parse(front.text));
    expectSameLimitHeaders(front, other, door);
    // app.inject() has no socket (its request never counts as complete): only a real one tells.
    if (door === 'fastify') expect(closes(other), `${what}: connection: close`).toBe(closes(front));
  }

  /** What every other door answered is what the front door answered (expectSameAnswer for each). */
  function expectDoorsAlike(sent: Record<Door, Sent>) {
    for (const door of DOORS.slice(1)) expectSameAnswer(sent.front.answer, sent[door].answer, door);
  }

  function expectSameLimitHeaders(front: Answer, other: Answer, door: Door) {
    const what = `${door} vs front`;
    expect(other.headers['x-ratelimit-limit'], what).toBe(front.headers['x-ratelimit-limit']);
    expect(other.headers['x-ratelimit-remaining'], what).toBe(front.headers['x-ratelimit-remaining']);
    // Seconds until a window ends: both present or both absent, and sensible (two requests may fall either side of a second).
    for (const h of ['retry-after', 'x-ratelimit-reset']) {
      expect(other.headers[h] === undefined, `${what}: ${h}`).toBe(front.headers[h] === undefined);
      for (const a of [front, other]) {
        if (a.headers[h] === undefined) continue;
        expect(Number(a.headers[h])).toBeGreaterThanOrEqual(1);
        expect(Number(a.headers[h])).toBeLessThanOrEqual(60);
      }
    }
  }

  interface Sent {
    key: { id: string; key: string };
    answer: Answer;
  }

  /**
   * Sends one request through each door, each with a fresh key made with `keyOptions` (and
   * `prepare`d, e.g. its rpm used up); checks that only the HTTP request to the exact path went
   * through the front door (`viaFront: false` when none should).
   */
  async function throughDoors(
    req: { method: 'GET' | 'POST'; path: string; body?: string | Buffer; headers?: (key: string) => Record<string, string>; keyOptions?: KeyOptions; prepare?: (key: { id: string; key: string }, door: Door) => Promise<void>; viaFront?: boolean },
  ): Promise<Record<Door, Sent>> {
    const out = {} as Record<Door, Sent>;
    for (const door of DOORS) {
      const key = await gw.createKey(req.keyOptions);
      await req.prepare?.(key, door);
      const headers = req.headers ? req.headers(key.key) : { authorization: `Bearer ${key.key}`, ...(req.method === 'POST' ? { 'content-type': 'application/json' } : {}) };
      const before = served();
      const answer = await send(door, req.method, req.path, headers, req.body);
      expect(served() - before, `${door}: requests the front door took`).toBe(door === 'front' && req.viaFront !== false ? 1 : 0);
      out[door] = { key, answer };
    }
    return out;
  }

  /** Every door's key has exactly `n` rows, the same ones. */
  async function expectSameRows(sent: Record<Door, Sent>, n: number) {
    const front = await rowsWhen(sent.front.key.id, n);
    expect(front).toHaveLength(n);
    for (const door of DOORS.slice(1)) {
      const rows = await rowsWhen(sent[door].key.id, n);
      expect(rows, `${door} vs front: ledger rows`).toEqual(front);
    }
    return front;
  }

  const chat = (body: Record<string, unknown>) => JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: 'hello' }], ...body });

  describe('GET /v1/models', () => {
    it('lists every model for a key without an allow-list', async () => {
      const sent = await throughDoors({ method: 'GET', path: '/v1/models' });
      const front = sent.front.answer;
      expect(front.status).toBe(200);
      expect(front.headers['content-type']).toBe('application/json; charset=utf-8');
      const body = JSON.parse(front.text);
      expect(body.data).toHaveLength(Object.keys(gw.config.models).length);
      expect(closes(front)).toBe(false);
      expectDoorsAlike(sent);
      await expectSameRows(sent, 0);
    });

    it('lists only the allowed models for a key with an allow-list, also with x-api-key', async () => {
      for (const headers of [(key: string) => ({ authorization: `Bearer ${key}` }), (key: string) => ({ 'x-api-key': key })]) {
        const sent = await throughDoors({ method: 'GET', path: '/v1/models', headers, keyOptions: { models: ['sim-video', 'sim-chat'] } });
        expect(JSON.parse(sent.front.answer.text).data.map((m: { id: string }) => m.id)).toEqual(['sim-chat', 'sim-video']);
        expectDoorsAlike(sent);
      }
    });

    it('carries the key rpm headers alike', async () => {
      const sent = await throughDoors({ method: 'GET', path: '/v1/models', keyOptions: { rpm: 10 } });
      expect(sent.front.answer.headers['x-ratelimit-limit']).toBe('10');
      expect(sent.front.answer.headers['x-ratelimit-remaining']).toBe('9');
      expectDoorsAlike(sent);
    });

    it('refuses an unknown key with 401 and writes no row', async () => {
      const rowsBefore = await allRows();
      const unknown = generateApiKey();
      const sent = await throughDoors({ method: 'GET', path: '/v1/models', headers: () => ({ authorization: `Bearer ${unknown}` }) });
      expect(sent.front.answer.status).toBe(401);
      expect(JSON.parse(sent.front.answer.text).error.code).toBe('invalid_api_key');
      expect(sent.front.answer.text).not.toContain(unknown);
      expectDoorsAlike(sent);
      expect(await allRows()).toBe(rowsBefore);
    });

    it('refuses a revoked key with 401', async () => {
      const sent = await throughDoors({
        method: 'GET',
        path: '/v1/models',
        prepare: async (key) => {
          // Known and cached first, then revoked, as the admin API does it.
          expect((await overHttp('GET', '/v1/models', { authorization: `Bearer ${key.key}` })).status).toBe(200);
          expect(await gw.services.keys.revoke(key.id)).toBe(true);
          gw.services.authenticator.invalidate();
        },
      });
      expect(sent.front.answer.status).toBe(401);
      expect(JSON.parse(sent.front.answer.text).error.code).toBe('invalid_api_key');
      expectDoorsAlike(sent);
    });
  });

  describe('POST /v1/chat/completions', () => {
    it('answers a valid request alike: same shape and usage, one 200 row', async () => {
      const sent = await throughDoors({ method: 'POST', path: '/v1/chat/completions', body: chat({}) });
      const bodies = DOORS.map((d) => JSON.parse(sent[d].answer.text));
      const front = sent.front.answer;
      expect(front.status).toBe(200);
      expect(closes(front)).toBe(false);
      expect(bodies[0]).toMatchObject({ object: 'chat.completion', model: 'sim-chat' });
      expect(bodies[0].usage.prompt_tokens).toBeGreaterThan(0);
      for (const [i, door] of DOORS.entries()) {
        const a = sent[door].answer;
        expect(a.status, door).toBe(200);
        expect(a.headers['content-type'], door).toBe(front.headers['content-type']);
        expect(Object.keys(bodies[i]).sort(), door).toEqual(Object.keys(bodies[0]).sort());
        expect(bodies[i].usage, door).toEqual(bodies[0].usage);
        expect(bodies[i].choices, door).toEqual(bodies[0].choices);
        expect(bodies[i].model, door).toBe(bodies[0].model);
        expect(typeof bodies[i].id, door).toBe('string');
      }
      expect(closes(sent.fastify.answer)).toBe(false);
      const rows = await expectSameRows(sent, 1);
      expect(rows[0]).toMatchObject({ endpoint: 'chat', model: 'sim-chat', status: 200, channel: 'simulator' });
      expect(rows[0].output_units).toBeGreaterThan(0);
    });

    it.each([
      ['a large body (many chunks)', chat({ messages: [{ role: 'user', content: 'word '.repeat(60_000) }] })],
      ['a body with a byte that is not UTF-8', Buffer.concat([Buffer.from('{"model":"sim-chat","messages":[{"role":"user","content":"a'), Buffer.from([0xff]), Buffer.from('b"}]}')])],
      ['a body starting with a byte order mark', `\ufeff${chat({})}`],
    ])('reads %s as Fastify does', async (_name, body) => {
      const sent = await throughDoors({ method: 'POST', path: '/v1/chat/completions', body });
      const bodies = DOORS.map((d) => JSON.parse(sent[d].answer.text));
      for (const [i, door] of DOORS.entries()) {
        expect(sent[door].answer.status, door).toBe(sent.front.answer.status);
        if (sent.front.answer.status === 200) {
          expect(bodies[i].choices, door).toEqual(bodies[0].choices);
          expect(bodies[i].usage, door).toEqual(bodies[0].usage);
        } else expect(bodies[i], door).toEqual(bodies[0]);
      }
      await expectSameRows(sent, 1);
    });

    // [name, body as sent, status, error code]: each refused with one row of that status.
    const refusals: [string, string, number, string][] = [
      ['invalid JSON', '{"model":"sim-chat","messages":', 400, 'invalid_request'],
      ['a body of only spaces', '   ', 400, 'invalid_request'],
      ['__proto__ poisoning', '{"model":"sim-chat","messages":[{"role":"user","content":"x"}],"__proto__":{"x":1}}', 400, 'invalid_request'],
      ['constructor.prototype poisoning', '{"model":"sim-chat","messages":[{"role":"user","content":"x"}],"constructor":{"prototype":{"x":1}}}', 400, 'invalid_request'],
      ['a body nested 65 levels deep', `{"model":"sim-chat","messages":[{"role":"user","content":"x"}],"metadata":${'['.repeat(64)}${']'.repeat(64)}}`, 400, 'invalid_request'],
      ['a JSON null', 'null', 400, 'invalid_request'],
      ['a JSON array', '[]', 400, 'invalid_request'],
      ['messages missing', JSON.stringify({ model: 'sim-chat' }), 400, 'invalid_request'],
      ['temperature 5', chat({ temperature: 5 }), 400, 'invalid_request'],
      ['a wrong role', chat({ messages: [{ role: 'wizard', content: 'x' }] }), 400, 'invalid_request'],
      ['an unknown model', chat({ model: 'no-such-model' }), 404, 'model_not_found'],
      ['a model of another kind', chat({ model: 'sim-image' }), 400, 'invalid_request'],
    ];

    it.each(refusals)('refuses %s alike, with one row', async (_name, body, status, code) => {
      const sent = await throughDoors({ method: 'POST', path: '/v1/chat/completions', body });
      const front = sent.front.answer;
      expect(front.status).toBe(status);
      expect(JSON.parse(front.text).error.code).toBe(code);
      expectDoorsAlike(sent);
      const rows = await expectSameRows(sent, 1);
      expect(rows[0]).toMatchObject({ endpoint: 'chat', status, channel: '', cost_micros: 0 });
    });

    it('passes a body nested exactly 64 levels deep as Fastify does', async () => {
      // 64 levels: the object and 63 arrays under metadata. The depth guard lets it through.
      const body = `{"model":"sim-chat","messages":[{"role":"user","content":"x"}],"metadata":${'['.repeat(63)}${']'.repeat(63)}}`;
      const sent = await throughDoors({ method: 'POST', path: '/v1/chat/completions', body });
      for (const door of DOORS) expect(sent[door].answer.status, door).toBe(200);
      expect((await expectSameRows(sent, 1))[0]).toMatchObject({ status: 200, model: 'sim-chat' });
    });

    it('refuses a model outside the key\'s allow-list with 403, alike', async () => {
      const sent = await throughDoors({ method: 'POST', path: '/v1/chat/completions', body: chat({ model: 'sim-claude' }), keyOptions: { models: ['sim-chat'] } });
      expect(sent.front.answer.status).toBe(403);
      expect(JSON.parse(sent.front.answer.text).error.code).toBe('model_not_allowed');
      expectDoorsAlike(sent);
      expect((await expectSameRows(sent, 1))[0]).toMatchObject({ status: 403, model: 'sim-claude' });
    });

    it('refuses a key with too little credit with 403, alike', async () => {
      const sent = await throughDoors({ method: 'POST', path: '/v1/chat/completions', body: chat({}), keyOptions: { creditMicros: 1_000 } });
      expect(sent.front.answer.status).toBe(403);
      expect(JSON.parse(sent.front.answer.text).error.code).toBe('insufficient_quota');
      expectDoorsAlike(sent);
      expect((await expectSameRows(sent, 1))[0]).toMatchObject({ status: 403, model: 'sim-chat', cost_micros: 0 });
    });

    it('refuses a refused key with 401 before reading the body: connection: close, no row', async () => {
      const rowsBefore = await allRows();
      const sent = await throughDoors({
        method: 'POST',
        path: '/v1/chat/completions',
        body: chat({}),
        headers: () => ({ authorization: `Bearer ${generateApiKey()}`, 'content-type': 'application/json' }),
      });
      expect(sent.front.answer.status).toBe(401);
      expectDoorsAlike(sent);
      expect(await allRows()).toBe(rowsBefore);
    });

    it('refuses a key over its rpm with 429 and the same headers, one row per request', async () => {
      // One key per door (each with rpm 1): its first request passes, its second is refused.
      const sent = await throughDoors({
        method: 'POST',
        path: '/v1/chat/completions',
        body: chat({}),
        keyOptions: { rpm: 1 },
        prepare: async (key, door) => {
          const first = await send(door, 'POST', '/v1/chat/completions', { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' }, chat({}));
          expect(first.status).toBe(200);
          expect(first.headers['x-ratelimit-remaining']).toBe('0');
        },
      });
      const front = sent.front.answer;
      expect(front.status).toBe(429);
      expect(JSON.parse(front.text).error.code).toBe('rate_limit_exceeded');
      expect(front.headers['retry-after']).toBeDefined();
      expect(front.headers['x-ratelimit-limit']).toBe('1');
      // Refused before its body was read (with limits in memory, at once; Redis answers once the small body is in).
      if (backend === 'memory') expect(closes(front)).toBe(true);
      expectDoorsAlike(sent);
      const rows = await expectSameRows(sent, 2);
      expect(rows.map((r) => [r.status, r.model])).toEqual([
        [200, 'sim-chat'],
        [429, ''],
      ]);
    });

    it('refuses a key at its concurrency with 429 while another request holds its slot', async () => {
      type Holder = Socket & { rest?: Buffer };
      const holders: Holder[] = [];
      const body = chat({});
      try {
        const sent = await throughDoors({
          method: 'POST',
          path: '/v1/chat/completions',
          body,
          keyOptions: { concurrency: 1 },
          prepare: async (key) => {
            // A request whose body is still coming holds the key's one slot (taken before the body is read).
            const holder: Holder = connect(port, '127.0.0.1');
            holder.on('error', () => undefined);
            holder.on('data', () => undefined);
            holders.push(holder);
            const whole = buildRequest('POST', '/v1/chat/completions', [['Authorization', `Bearer ${key.key}`], ['Content-Type', 'application/json']], body);
            const split = whole.length - body.length + 5;
            holder.write(whole.subarray(0, split));
            holder.rest = whole.subarray(split);
            await eventually(async () => (await gw.services.limits.store.held(`key:${key.id}`)) === 1, 15_000, 'the slot to be held');
          },
        });
        const front = sent.front.answer;
        expect(front.status).toBe(429);
        expect(JSON.parse(front.text).error.code).toBe('rate_limit_exceeded');
        expect(front.headers['x-ratelimit-limit']).toBe('1');
        if (backend === 'memory') expect(closes(front)).toBe(true);
        expectDoorsAlike(sent);
        // The holders finish their bodies and are answered: one 429 row and one 200 row per key.
        for (const h of holders) h.write(h.rest!);
        const rows = await expectSameRows(sent, 2);
        expect(rows.map((r) => r.status).sort()).toEqual([200, 429]);
      } finally {
        for (const h of holders) h.destroy();
      }
    });

    it('refuses a model over its rpm with 429, alike', async () => {
      const { key } = await gw.createKey();
      // The model's one request of the minute, by another key.
      await overHttp('POST', '/v1/chat/completions', { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, chat({ model: RPM_MODEL }));
      const sent = await throughDoors({ method: 'POST', path: '/v1/chat/completions', body: chat({ model: RPM_MODEL }) });
      const front = sent.front.answer;
      expect(front.status).toBe(429);
      expect(JSON.parse(front.text).error.message).toContain(RPM_MODEL);
      expect(front.headers['retry-after']).toBeDefined();
      expectDoorsAlike(sent);
      expect((await expectSameRows(sent, 1))[0]).toMatchObject({ status: 429, model: RPM_MODEL });
    });

    it('streams alike: event-stream, [DONE], one 200 row', async () => {
      const sent = await throughDoors({ method: 'POST', path: '/v1/chat/completions', body: chat({ stream: true }) });
      for (const door of DOORS) {
        const a = sent[door].answer;
        expect(a.status, door).toBe(200);
        expect(a.headers['content-type'], door).toMatch(/^text\/event-stream/);
        expect(a.text, door).toContain('data: [DONE]');
        expect(a.text.trimEnd().endsWith('data: [DONE]'), door).toBe(true);
      }
      expect(sent.front.answer.headers['content-type']).toBe(sent.fastify.answer.headers['content-type']);
      const rows = await expectSameRows(sent, 1);
      expect(rows[0]).toMatchObject({ status: 200, model: 'sim-chat', channel: 'simulator' });
    });
  });

  describe('requests the front door leaves to Fastify', () => {
    // Each one's answer must be what app.inject() gets for it, and served() must not move.
    it('a query string', async () => {
      const before = served();
      const { key } = await gw.createKey();
      const http = await overHttp('GET', '/v1/models?x=1', { authorization: `Bearer ${key}` });
      expect(served()).toBe(before);
      const inj = await send('inject', 'GET', '/v1/models?x=1', { authorization: `Bearer ${key}` });
      expect(http.status).toBe(200);
      expect(JSON.parse(http.text)).toEqual(JSON.parse(inj.text));
    });

    it('a chunked body', async () => {
      const { id, key } = await gw.createKey();
      const before = served();
      const http = await overHttp('POST', '/v1/chat/completions', { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, chat({}), true);
      expect(served()).toBe(before);
      expect(http.status).toBe(200);
      expect(JSON.parse(http.text)).toMatchObject({ object: 'chat.completion', model: 'sim-chat' });
      expect((await rowsWhen(id, 1)).map((r) => r.status)).toEqual([200]);
    });

    it('a text/plain body', async () => {
      const sent = await throughDoors({
        method: 'POST',
        path: '/v1/chat/completions',
        body: chat({}),
        headers: (key) => ({ authorization: `Bearer ${key}`, 'content-type': 'text/plain' }),
        viaFront: false,
      });
      expect(sent.front.answer.status).toBe(400);
      // Fastify's text parser hands the schema a string.
      expect(JSON.parse(sent.front.answer.text).error.message).toBe('Invalid request: body must be object.');
      expectDoorsAlike(sent);
      await expectSameRows(sent, 1);
    });

    it('an empty body (Content-Length: 0)', async () => {
      const sent = await throughDoors({ method: 'POST', path: '/v1/chat/completions', body: '', viaFront: false });
      expect(sent.front.answer.status).toBe(400);
      expectDoorsAlike(sent);
      await expectSameRows(sent, 1);
    });

    it('a key only in ?key=', async () => {
      const rowsBefore = await allRows();
      for (const [method, path, body] of [
        ['GET', '/v1/models', undefined],
        ['POST', '/v1/chat/completions', chat({})],
      ] as const) {
        const { key } = await gw.createKey();
        const headers: Record<string, string> = method === 'POST' ? { 'content-type': 'application/json' } : {};
        const before = served();
        const http = await overHttp(method, `${path}?key=${key}`, headers, body);
        expect(served()).toBe(before);
        const inj = await send('inject', method, `${path}?key=${key}`, headers, body);
        expect(http.status).toBe(401);
        expect(inj.status).toBe(401);
        expect(JSON.parse(http.text)).toEqual(JSON.parse(inj.text));
        expect(http.text).not.toContain(key);
      }
      expect(await allRows()).toBe(rowsBefore);
    });

    it('no key header at all', async () => {
      const rowsBefore = await allRows();
      for (const [method, body] of [
        ['GET', undefined],
        ['POST', chat({})],
      ] as const) {
        const path = method === 'GET' ? '/v1/models' : '/v1/chat/completions';
        const headers: Record<string, string> = method === 'POST' ? { 'content-type': 'application/json' } : {};
        const before = served();
        const http = await overHttp(method, path, headers, body);
        expect(served()).toBe(before);
        const inj = await send('inject', method, path, headers, body);
        expect(http.status).toBe(401);
        expect(JSON.parse(http.text)).toEqual(JSON.parse(inj.text));
        expect(JSON.parse(http.text).error.code).toBe('invalid_api_key');
        // A POST refused before its body was read ends its connection.
        expect(closes(http)).toBe(method === 'POST');
      }
      expect(await allRows()).toBe(rowsBefore);
    });

    it('HEAD /v1/models', async () => {
      const { key } = await gw.createKey();
      const before = served();
      const http = await overHttp('HEAD', '/v1/models', { authorization: `Bearer ${key}` });
      expect(served()).toBe(before);
      const inj = await send('inject', 'HEAD', '/v1/models', { authorization: `Bearer ${key}` });
      expect(http.status).toBe(inj.status);
      expect(http.status).toBe(200);
      expect(http.text).toBe('');
      expect(http.headers['content-type']).toBe(inj.headers['content-type']);
    });

    it('a declared body over the limit', async () => {
      const { key } = await gw.createKey();
      const before = served();
      const limit = gw.config.server.body_limit_mb * 1024 * 1024;
      const res = await rawRequest(port, buildRequest('POST', '/v1/chat/completions', [['Authorization', `Bearer ${key}`], ['Content-Type', 'application/json'], ['Content-Length', String(limit + 1)]]));
      expect(served()).toBe(before);
      expect(res.status).toBe(413);
      expect(JSON.parse(res.body).error.code).toBe('request_too_large');
    });
  });

  describe('GET /v1/video/generations/{id}', () => {
    // One task read by its own key through each door; the Host header is given, so the gateway's own
    // URLs in the answer are the same whichever door made them.
    async function finishedTask() {
      const { id, key } = await gw.createKey();
      const created = await createTask(gw.url, key, { model: 'sim-video', prompt: 'a corgi runs on grass' });
      expect(created.status).toBe(200);
      const taskId = created.body.data.task_id as string;
      await waitForTask(gw.url, key, taskId, isFinished);
      return { id, key, taskId };
    }
    const headersOf = (key: string) => ({ authorization: `Bearer ${key}`, host: `127.0.0.1:${port}` });

    it('reads a task alike through every door, the front one taking only the plain path', async () => {
      const { key, taskId } = await finishedTask();
      const answers = {} as Record<Door, Answer>;
      for (const door of DOORS) {
        const before = served();
        answers[door] = await send(door, 'GET', `/v1/video/generations/${taskId}`, headersOf(key));
        expect(served() - before, `${door}: requests the front door took`).toBe(door === 'front' ? 1 : 0);
      }
      expect(answers.front.status).toBe(200);
      expect(JSON.parse(answers.front.text).data.task_id).toBe(taskId);
      for (const door of DOORS.slice(1)) {
        expect(answers[door].status, door).toBe(200);
        expect(answers[door].headers['content-type'], door).toBe(answers.front.headers['content-type']);
        // Byte for byte: both doors serialize with the route's one compiled serializer.
        expect(answers[door].text, door).toBe(answers.front.text);
      }
    });

    it('refuses another key\'s task and an unknown one with the same 404', async () => {
      const { taskId } = await finishedTask();
      const other = await gw.createKey();
      for (const path of [`/v1/video/generations/${taskId}`, '/v1/video/generations/task_not_there']) {
        const answers = {} as Record<Door, Answer>;
        for (const door of DOORS) answers[door] = await send(door, 'GET', path, headersOf(other.key));
        expect(answers.front.status, path).toBe(404);
        for (const door of DOORS.slice(1)) expectSameAnswer(answers.front, answers[door], door);
      }
    });

    it('leaves an id that needs decoding to Fastify, which answers it the same', async () => {
      const { key, taskId } = await finishedTask();
      // The id's first letter percent-encoded: the same task for Fastify's router.
      const encoded = `%${taskId.charCodeAt(0).toString(16)}${taskId.slice(1)}`;
      const before = served();
      const viaFastify = await overHttp('GET', `/v1/video/generations/${encoded}`, headersOf(key));
      expect(served()).toBe(before);
      const viaFront = await overHttp('GET', `/v1/video/generations/${taskId}`, headersOf(key));
      expect(served()).toBe(before + 1);
      expect(viaFastify.status).toBe(200);
      expect(viaFastify.text).toBe(viaFront.text);
    });
  });

  describe('a client that leaves while sending its body', () => {
    it.each(['front', 'fastify'] as const)('leaves one 499 row (%s door), and the next request is answered', async (door) => {
      // A concurrency limit, so the held slot shows when the request arrived (its key admitted) in either door.
      const { id, key } = await gw.createKey({ concurrency: 5 });
      // Known first: the request's key is then resolved at once.
      expect((await overHttp('GET', '/v1/models', { authorization: `Bearer ${key}` })).status).toBe(200);
      const body = chat({});
      const target = door === 'front' ? '/v1/chat/completions' : '/v1/chat/completions?door=fastify';
      const head = buildRequest('POST', target, [['Authorization', `Bearer ${key}`], ['Content-Type', 'application/json']], body);
      const before = served();
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => undefined);
      socket.write(head.subarray(0, head.length - 10));
      await eventually(async () => (await gw.services.limits.store.held(`key:${id}`)) === 1, 15_000, 'the request to hold its slot');
      expect(served()).toBe(before + (door === 'front' ? 1 : 0));
      socket.destroy();
      const rows = await rowsWhen(id, 1);
      expect(rows.map((r) => [r.status, r.model, r.cost_micros])).toEqual([[499, '', 0]]);
      const next = await overHttp('POST', target, { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body);
      expect(next.status).toBe(200);
      expect((await rowsWhen(id, 2)).map((r) => r.status)).toEqual([499, 200]);
      expect(served()).toBe(before + (door === 'front' ? 2 : 0));
    });
  });
});
