import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { startGateway, usageRowsOf, type KeyOptions, type TestGateway } from './helpers/gateway.js';
import { eventually } from './helpers/eventually.js';
import { freshRedisPrefix } from './helpers/redis.js';
import { rawRequest, buildRequest } from './helpers/raw-http.js';
import { SEEDANCE_MODELS, SIMULATOR_MODELS } from '../src/config-file/defaults.js';
import { generateApiKey } from '../src/auth/keys.js';
import { REQUEST_END, REQUEST_START, type RequestEndMessage, type RequestStartMessage } from '../src/pipeline/diagnostics.js';
import { createTask, isFinished, waitForTask } from './helpers/video.js';

// The one request pipeline (src/pipeline/steps.ts) on the hottest routes — GET /v1/models, POST
// /v1/chat/completions, GET /v1/video/generations/{id} — over real HTTP: status, error body,
// content type, rate-limit headers, `connection: close`, and the ledger rows, whatever the form of
// the request (a query string, a chunked body, a text/plain body, HEAD, a key in ?key=). Once with
// limits kept in memory (admitted synchronously) and once in Redis (through promises). Every request
// is published on the pipeline's diagnostics channels.

interface Answer {
  status: number;
  headers: Record<string, string | undefined>;
  text: string;
}

const RPM_MODEL = 'sim-chat-rpm1';

describe.each(['memory', 'redis'] as const)('the request pipeline (%s limits)', (backend) => {
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

  const send = (method: string, path: string, headers: Record<string, string>, body?: string | Buffer) => overHttp(method, path, headers, body);

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

  function expectLimitHeaders(a: Answer) {
    // Seconds until a window ends: sensible when present.
    for (const h of ['retry-after', 'x-ratelimit-reset']) {
      if (a.headers[h] === undefined) continue;
      expect(Number(a.headers[h])).toBeGreaterThanOrEqual(1);
      expect(Number(a.headers[h])).toBeLessThanOrEqual(60);
    }
  }

  interface Sent {
    key: { id: string; key: string };
    answer: Answer;
  }

  /** Sends one request with a fresh key made with `keyOptions` (and `prepare`d, e.g. its rpm used up). */
  async function sendOnce(req: { method: 'GET' | 'POST' | 'HEAD'; path: string; body?: string | Buffer; headers?: (key: string) => Record<string, string>; keyOptions?: KeyOptions; prepare?: (key: { id: string; key: string }) => Promise<void> }): Promise<Sent> {
    const key = await gw.createKey(req.keyOptions);
    await req.prepare?.(key);
    const headers = req.headers ? req.headers(key.key) : { authorization: `Bearer ${key.key}`, ...(req.method === 'POST' ? { 'content-type': 'application/json' } : {}) };
    const answer = await send(req.method, req.path, headers, req.body);
    expectLimitHeaders(answer);
    return { key, answer };
  }

  /** The key has exactly `n` rows. */
  async function expectRows(sent: Sent, n: number) {
    const rows = await rowsWhen(sent.key.id, n);
    expect(rows).toHaveLength(n);
    return rows;
  }

  const chat = (body: Record<string, unknown>) => JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: 'hello' }], ...body });
  const json = (a: Answer) => JSON.parse(a.text);

  describe('GET /v1/models', () => {
    it('lists every model for a key without an allow-list', async () => {
      const sent = await sendOnce({ method: 'GET', path: '/v1/models' });
      const a = sent.answer;
      expect(a.status).toBe(200);
      expect(a.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(json(a).data).toHaveLength(Object.keys(gw.config.models).length);
      expect(closes(a)).toBe(false);
      await expectRows(sent, 0);
    });

    it('lists only the allowed models for a key with an allow-list, with Bearer or x-api-key, with a query string or not', async () => {
      for (const headers of [(key: string) => ({ authorization: `Bearer ${key}` }), (key: string) => ({ 'x-api-key': key })]) {
        for (const path of ['/v1/models', '/v1/models?x=1']) {
          const sent = await sendOnce({ method: 'GET', path, headers, keyOptions: { models: ['sim-video', 'sim-chat'] } });
          expect(json(sent.answer).data.map((m: { id: string }) => m.id)).toEqual(['sim-chat', 'sim-video']);
        }
      }
    });

    it('carries the key rpm headers', async () => {
      const sent = await sendOnce({ method: 'GET', path: '/v1/models', keyOptions: { rpm: 10 } });
      expect(sent.answer.headers['x-ratelimit-limit']).toBe('10');
      expect(sent.answer.headers['x-ratelimit-remaining']).toBe('9');
    });

    it('refuses an unknown key with 401 and writes no row', async () => {
      const rowsBefore = await allRows();
      const unknown = generateApiKey();
      const sent = await sendOnce({ method: 'GET', path: '/v1/models', headers: () => ({ authorization: `Bearer ${unknown}` }) });
      expect(sent.answer.status).toBe(401);
      expect(json(sent.answer).error.code).toBe('invalid_api_key');
      expect(sent.answer.text).not.toContain(unknown);
      expect(await allRows()).toBe(rowsBefore);
    });

    it('refuses a revoked key with 401', async () => {
      const sent = await sendOnce({
        method: 'GET',
        path: '/v1/models',
        prepare: async (key) => {
          // Known and cached first, then revoked, as the admin API does it.
          expect((await overHttp('GET', '/v1/models', { authorization: `Bearer ${key.key}` })).status).toBe(200);
          expect(await gw.services.keys.revoke(key.id)).toBe(true);
          gw.services.authenticator.invalidate();
        },
      });
      expect(sent.answer.status).toBe(401);
      expect(json(sent.answer).error.code).toBe('invalid_api_key');
    });

    it('answers HEAD with the headers of GET and no body', async () => {
      const sent = await sendOnce({ method: 'HEAD', path: '/v1/models' });
      expect(sent.answer.status).toBe(200);
      expect(sent.answer.text).toBe('');
      expect(sent.answer.headers['content-type']).toBe('application/json; charset=utf-8');
    });
  });

  describe('POST /v1/chat/completions', () => {
    it('answers a valid request, fixed-length or chunked: one 200 row each', async () => {
      for (const chunked of [false, true]) {
        const { id, key } = await gw.createKey();
        const a = await overHttp('POST', '/v1/chat/completions', { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, chat({}), chunked);
        expect(a.status).toBe(200);
        expect(closes(a)).toBe(false);
        expect(json(a)).toMatchObject({ object: 'chat.completion', model: 'sim-chat' });
        expect(json(a).usage.prompt_tokens).toBeGreaterThan(0);
        const rows = await rowsWhen(id, 1);
        expect(rows).toHaveLength(1);
        expect(rows[0]).toMatchObject({ endpoint: 'chat', model: 'sim-chat', status: 200, channel: 'simulator' });
        expect(rows[0].output_units).toBeGreaterThan(0);
      }
    });

    it.each([
      ['a large body (many chunks)', chat({ messages: [{ role: 'user', content: 'word '.repeat(60_000) }] }), 200],
      ['a body with a byte that is not UTF-8', Buffer.concat([Buffer.from('{"model":"sim-chat","messages":[{"role":"user","content":"a'), Buffer.from([0xff]), Buffer.from('b"}]}')]), 200],
      ['a body starting with a byte order mark', `\ufeff${chat({})}`, 200],
    ])('reads %s', async (_name, body, status) => {
      const sent = await sendOnce({ method: 'POST', path: '/v1/chat/completions', body });
      expect(sent.answer.status).toBe(status);
      await expectRows(sent, 1);
    });

    // [name, body as sent, status, error code, message]: each refused with one row of that status.
    const refusals: [string, string, number, string, string | null][] = [
      ['invalid JSON', '{"model":"sim-chat","messages":', 400, 'invalid_request', 'The request body is not valid JSON.'],
      ['a body of only spaces', '   ', 400, 'invalid_request', 'The request body is not valid JSON.'],
      ['__proto__ poisoning', '{"model":"sim-chat","messages":[{"role":"user","content":"x"}],"__proto__":{"x":1}}', 400, 'invalid_request', 'The request body is not valid JSON.'],
      ['constructor.prototype poisoning', '{"model":"sim-chat","messages":[{"role":"user","content":"x"}],"constructor":{"prototype":{"x":1}}}', 400, 'invalid_request', 'The request body is not valid JSON.'],
      ['a body nested 65 levels deep', `{"model":"sim-chat","messages":[{"role":"user","content":"x"}],"metadata":${'['.repeat(64)}${']'.repeat(64)}}`, 400, 'invalid_request', 'The request body is nested deeper than 64 levels.'],
      ['a JSON null', 'null', 400, 'invalid_request', 'Invalid request: body must be object.'],
      ['a JSON array', '[]', 400, 'invalid_request', 'Invalid request: body must be object.'],
      ['messages missing', JSON.stringify({ model: 'sim-chat' }), 400, 'invalid_request', null],
      ['temperature 5', chat({ temperature: 5 }), 400, 'invalid_request', null],
      ['a wrong role', chat({ messages: [{ role: 'wizard', content: 'x' }] }), 400, 'invalid_request', null],
      ['an unknown model', chat({ model: 'no-such-model' }), 404, 'model_not_found', null],
      ['a model of another kind', chat({ model: 'sim-image' }), 400, 'invalid_request', null],
      ['an empty body', '', 400, 'invalid_request', 'The request body is empty; a JSON object is required.'],
    ];

    it.each(refusals)('refuses %s, with one row', async (_name, body, status, code, message) => {
      const sent = await sendOnce({ method: 'POST', path: '/v1/chat/completions', body });
      expect(sent.answer.status).toBe(status);
      expect(sent.answer.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(json(sent.answer).error.code).toBe(code);
      if (message) expect(json(sent.answer).error.message).toBe(message);
      const rows = await expectRows(sent, 1);
      expect(rows[0]).toMatchObject({ endpoint: 'chat', status, channel: '', cost_micros: 0 });
    });

    it('hands a text/plain body to the schema as a string', async () => {
      const sent = await sendOnce({ method: 'POST', path: '/v1/chat/completions', body: chat({}), headers: (key) => ({ authorization: `Bearer ${key}`, 'content-type': 'text/plain' }) });
      expect(sent.answer.status).toBe(400);
      expect(json(sent.answer).error.message).toBe('Invalid request: body must be object.');
      await expectRows(sent, 1);
    });

    it('refuses a body of another content type, and a body without one', async () => {
      for (const headers of [(key: string) => ({ authorization: `Bearer ${key}`, 'content-type': 'application/xml' }), (key: string) => ({ authorization: `Bearer ${key}` })]) {
        const sent = await sendOnce({ method: 'POST', path: '/v1/chat/completions', body: chat({}), headers });
        expect(sent.answer.status).toBe(400);
        expect(json(sent.answer).error.message).toBe('The request body must be JSON (Content-Type: application/json).');
      }
    });

    it('passes a body nested exactly 64 levels deep', async () => {
      // 64 levels: the object and 63 arrays under metadata. The depth guard lets it through.
      const body = `{"model":"sim-chat","messages":[{"role":"user","content":"x"}],"metadata":${'['.repeat(63)}${']'.repeat(63)}}`;
      const sent = await sendOnce({ method: 'POST', path: '/v1/chat/completions', body });
      expect(sent.answer.status).toBe(200);
      expect((await expectRows(sent, 1))[0]).toMatchObject({ status: 200, model: 'sim-chat' });
    });

    it("refuses a model outside the key's allow-list with 403", async () => {
      const sent = await sendOnce({ method: 'POST', path: '/v1/chat/completions', body: chat({ model: 'sim-claude' }), keyOptions: { models: ['sim-chat'] } });
      expect(sent.answer.status).toBe(403);
      expect(json(sent.answer).error.code).toBe('model_not_allowed');
      expect((await expectRows(sent, 1))[0]).toMatchObject({ status: 403, model: 'sim-claude' });
    });

    it('refuses a key with too little credit with 403', async () => {
      const sent = await sendOnce({ method: 'POST', path: '/v1/chat/completions', body: chat({}), keyOptions: { creditMicros: 1_000 } });
      expect(sent.answer.status).toBe(403);
      expect(json(sent.answer).error.code).toBe('insufficient_quota');
      expect((await expectRows(sent, 1))[0]).toMatchObject({ status: 403, model: 'sim-chat', cost_micros: 0 });
    });

    it('refuses a missing, unknown or ?key= key with 401, no row', async () => {
      const rowsBefore = await allRows();
      const unknown = generateApiKey();
      const { key } = await gw.createKey();
      for (const [path, headers] of [
        ['/v1/chat/completions', { authorization: `Bearer ${unknown}`, 'content-type': 'application/json' }],
        ['/v1/chat/completions', { 'content-type': 'application/json' }],
        // ?key= is Google's form, taken on /v1beta/ only.
        [`/v1/chat/completions?key=${key}`, { 'content-type': 'application/json' }],
      ] as const) {
        const a = await overHttp('POST', path, headers, chat({}));
        expect(a.status).toBe(401);
        expect(json(a).error.code).toBe('invalid_api_key');
        expect(a.text).not.toContain(key);
      }
      const viaQuery = await overHttp('GET', `/v1/models?key=${key}`, {});
      expect(viaQuery.status).toBe(401);
      expect(closes(viaQuery)).toBe(false);
      expect(await allRows()).toBe(rowsBefore);
    });

    it('refuses a key over its rpm with 429 and its headers, one row per request', async () => {
      const sent = await sendOnce({
        method: 'POST',
        path: '/v1/chat/completions',
        body: chat({}),
        keyOptions: { rpm: 1 },
        prepare: async (key) => {
          const first = await send('POST', '/v1/chat/completions', { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' }, chat({}));
          expect(first.status).toBe(200);
          expect(first.headers['x-ratelimit-remaining']).toBe('0');
        },
      });
      const a = sent.answer;
      expect(a.status).toBe(429);
      expect(json(a).error.code).toBe('rate_limit_exceeded');
      expect(a.headers['retry-after']).toBeDefined();
      expect(a.headers['x-ratelimit-limit']).toBe('1');
      // Refused before its body was read (with limits in memory, at once; Redis answers once the small body is in).
      if (backend === 'memory') expect(closes(a)).toBe(true);
      const rows = await expectRows(sent, 2);
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
        const sent = await sendOnce({
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
        const a = sent.answer;
        expect(a.status).toBe(429);
        expect(json(a).error.code).toBe('rate_limit_exceeded');
        expect(a.headers['x-ratelimit-limit']).toBe('1');
        if (backend === 'memory') expect(closes(a)).toBe(true);
        // The holder finishes its body and is answered: one 429 row and one 200 row.
        for (const h of holders) h.write(h.rest!);
        const rows = await expectRows(sent, 2);
        expect(rows.map((r) => r.status).sort()).toEqual([200, 429]);
      } finally {
        for (const h of holders) h.destroy();
      }
    });

    it('refuses a model over its rpm with 429', async () => {
      const { key } = await gw.createKey();
      // The model's one request of the minute, by another key.
      await overHttp('POST', '/v1/chat/completions', { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, chat({ model: RPM_MODEL }));
      const sent = await sendOnce({ method: 'POST', path: '/v1/chat/completions', body: chat({ model: RPM_MODEL }) });
      expect(sent.answer.status).toBe(429);
      expect(json(sent.answer).error.message).toContain(RPM_MODEL);
      expect(sent.answer.headers['retry-after']).toBeDefined();
      expect((await expectRows(sent, 1))[0]).toMatchObject({ status: 429, model: RPM_MODEL });
    });

    it('streams: event-stream, [DONE], one 200 row', async () => {
      const sent = await sendOnce({ method: 'POST', path: '/v1/chat/completions', body: chat({ stream: true }) });
      const a = sent.answer;
      expect(a.status).toBe(200);
      expect(a.headers['content-type']).toBe('text/event-stream; charset=utf-8');
      expect(a.text.trimEnd().endsWith('data: [DONE]')).toBe(true);
      expect((await expectRows(sent, 1))[0]).toMatchObject({ status: 200, model: 'sim-chat', channel: 'simulator' });
    });

    it('refuses an unknown key before its body arrived: the answer closes the connection, the body is never read', async () => {
      // Headers only (a body of 100 bytes declared, none sent): refused at once.
      const head = buildRequest('POST', '/v1/chat/completions', [['Authorization', `Bearer ${generateApiKey()}`], ['Content-Type', 'application/json'], ['Content-Length', '100']]);
      const res = await rawRequest(port, head);
      expect(res.status).toBe(401);
      expect(res.headers.connection).toBe('close');
    });

    it('refuses a declared body over the limit before reading it', async () => {
      const { key } = await gw.createKey();
      const limit = gw.config.server.body_limit_mb * 1024 * 1024;
      const res = await rawRequest(port, buildRequest('POST', '/v1/chat/completions', [['Authorization', `Bearer ${key}`], ['Content-Type', 'application/json'], ['Content-Length', String(limit + 1)]]));
      expect(res.status).toBe(413);
      expect(JSON.parse(res.body).error.code).toBe('request_too_large');
    });
  });

  describe('GET /v1/video/generations/{id}', () => {
    // The Host header is given, so the gateway's own URLs in the answer are the same for every read.
    async function finishedTask() {
      const { id, key } = await gw.createKey();
      const created = await createTask(gw.url, key, { model: 'sim-video', prompt: 'a corgi runs on grass' });
      expect(created.status).toBe(200);
      const taskId = created.body.data.task_id as string;
      await waitForTask(gw.url, key, taskId, isFinished);
      return { id, key, taskId };
    }
    const headersOf = (key: string) => ({ authorization: `Bearer ${key}`, host: `127.0.0.1:${port}` });

    it('reads a task by its id, also percent-encoded or with a query string, byte for byte', async () => {
      const { key, taskId } = await finishedTask();
      const plain = await send('GET', `/v1/video/generations/${taskId}`, headersOf(key));
      expect(plain.status).toBe(200);
      expect(plain.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(json(plain).data.task_id).toBe(taskId);
      // The id's first letter percent-encoded: the same task for the router.
      const encoded = `%${taskId.charCodeAt(0).toString(16)}${taskId.slice(1)}`;
      for (const path of [`/v1/video/generations/${encoded}`, `/v1/video/generations/${taskId}?x=1`]) {
        const again = await send('GET', path, headersOf(key));
        expect(again.status, path).toBe(200);
        expect(again.text, path).toBe(plain.text);
      }
    });

    it("refuses another key's task and an unknown one with the same 404", async () => {
      const { taskId } = await finishedTask();
      const other = await gw.createKey();
      const answers = [];
      for (const path of [`/v1/video/generations/${taskId}`, '/v1/video/generations/task_not_there']) {
        const a = await send('GET', path, headersOf(other.key));
        expect(a.status, path).toBe(404);
        answers.push(json(a).code);
      }
      expect(answers).toEqual(['task_not_exist', 'task_not_exist']);
    });
  });

  describe('a client that leaves while sending its body', () => {
    it('leaves one 499 row, and the next request is answered', async () => {
      // A concurrency limit, so the held slot shows when the request arrived (its key admitted).
      const { id, key } = await gw.createKey({ concurrency: 5 });
      // Known first: the request's key is then resolved at once.
      expect((await overHttp('GET', '/v1/models', { authorization: `Bearer ${key}` })).status).toBe(200);
      const body = chat({});
      const head = buildRequest('POST', '/v1/chat/completions', [['Authorization', `Bearer ${key}`], ['Content-Type', 'application/json']], body);
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => undefined);
      socket.write(head.subarray(0, head.length - 10));
      await eventually(async () => (await gw.services.limits.store.held(`key:${id}`)) === 1, 15_000, 'the request to hold its slot');
      socket.destroy();
      const rows = await rowsWhen(id, 1);
      expect(rows.map((r) => [r.status, r.model, r.cost_micros])).toEqual([[499, '', 0]]);
      const next = await overHttp('POST', '/v1/chat/completions', { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body);
      expect(next.status).toBe(200);
      expect((await rowsWhen(id, 2)).map((r) => r.status)).toEqual([499, 200]);
    });
  });

  describe('diagnostics', () => {
    it('publishes every request on mediagate:request:start and :end, routed or not', async () => {
      const starts: RequestStartMessage[] = [];
      const ends: RequestEndMessage[] = [];
      const onStart = (m: unknown) => starts.push(m as RequestStartMessage);
      const onEnd = (m: unknown) => ends.push(m as RequestEndMessage);
      subscribe(REQUEST_START, onStart);
      subscribe(REQUEST_END, onEnd);
      try {
        const { key } = await gw.createKey();
        const auth = { authorization: `Bearer ${key}` };
        await send('GET', '/v1/models', auth);
        await send('POST', '/v1/chat/completions', { ...auth, 'content-type': 'application/json' }, chat({}));
        await send('GET', '/no/such/route', {});
        await eventually(async () => ends.length >= 3, 15_000, 'three ends');
      } finally {
        unsubscribe(REQUEST_START, onStart);
        unsubscribe(REQUEST_END, onEnd);
      }
      expect(starts.map((m) => [m.request.method, m.request.url])).toEqual([
        ['GET', '/v1/models'],
        ['POST', '/v1/chat/completions'],
        ['GET', '/no/such/route'],
      ]);
      expect(ends.map((m) => [m.request.route?.url ?? null, m.statusCode, m.finished])).toEqual([
        ['/v1/models', 200, true],
        ['/v1/chat/completions', 200, true],
        [null, 404, true],
      ]);
      // The same request object from start to end, its principal known at the end.
      expect(ends[0].request).toBe(starts[0].request);
      expect(ends[1].request.principal?.keyId).toBeDefined();
      for (const m of ends) expect(m.durationMs).toBeGreaterThanOrEqual(0);
    });
  });
});
