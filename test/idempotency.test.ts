import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../src/simulator/server.js';
import { embeddedDefault } from '../src/config-file/defaults.js';
import { startGateway, usageRowsOf, type TestGateway } from './helpers/gateway.js';
import { startChatRig, type ChatRig } from './helpers/chat.js';
import { eventually } from './helpers/eventually.js';
import { photo } from './helpers/png.js';
import { IdempotencyRepo } from '../src/store/repos/idempotency.js';

// Idempotency-Key on the routes that cost money: a repeat of the same request with the same key is
// answered with the first answer (Idempotent-Replayed: true) and makes no second upstream call, hold
// or ledger row; a different request with the key is 422; a repeat while the first runs waits for
// it or gets 409; answers a retry may get past (5xx) are not kept. Upstream calls are counted on the
// simulator (GET /__sim/stats).

let n = 0;
const freshKey = () => `idem-${process.pid}-${Date.now()}-${++n}`;

/** POSTs JSON with the key and, when given, an Idempotency-Key. */
async function send(gw: TestGateway, path: string, key: string, body: unknown, idem?: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(idem === undefined ? {} : { 'idempotency-key': idem }), ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** Upstream calls the simulator served, by route name (its control and file routes left out). */
async function upstreamCalls(sim: { url: string }): Promise<Record<string, number>> {
  const stats = (await (await fetch(`${sim.url}/__sim/stats`)).json()) as { counts: Record<string, number> };
  return Object.fromEntries(Object.entries(stats.counts).filter(([name]) => !name.startsWith('control.') && !name.startsWith('files.')));
}

const total = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);

/** A request written byte by byte: fetch and Node's client refuse control characters in a header. */
function rawPost(gw: TestGateway, path: string, key: string, idem: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify(CHAT);
    const u = new URL(gw.url);
    const socket = connect(Number(u.port), u.hostname, () => {
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: ${u.host}\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
          `Idempotency-Key: ${idem}\r\nConnection: close\r\n\r\n${body}`,
      );
    });
    let text = '';
    socket.on('data', (c: Buffer) => (text += c.toString()));
    socket.on('end', () => {
      const status = Number(/^HTTP\/1\.1 (\d+)/.exec(text)?.[1] ?? 0);
      resolve({ status, body: JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) });
    });
    socket.on('error', reject);
  });
}

const CHAT = { model: 'gpt-sim', messages: [{ role: 'user', content: 'Hello there' }] };

describe('Idempotency-Key on chat and images (standalone simulator)', () => {
  let rig: ChatRig;
  let sim: Simulator;
  let gw: TestGateway;
  beforeAll(async () => {
    rig = await startChatRig({ relay: { breaker_failures: 1000 } });
    ({ sim, gw } = rig);
  });
  afterAll(async () => rig.close());

  it('replays a chat completion: the same answer, one upstream call, one charge, one ledger row', async () => {
    const { id, key } = await gw.createKey({ creditMicros: 1_000_000 });
    const idem = freshKey();
    const before = (await upstreamCalls(sim))['openai.chat'] ?? 0;
    const first = await send(gw, '/v1/chat/completions', key, CHAT, idem);
    expect(first.status).toBe(200);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await send(gw, '/v1/chat/completions', key, CHAT, idem);
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('content-type')).toBe(first.headers.get('content-type'));
    expect(again.text).toBe(first.text);
    expect((await upstreamCalls(sim))['openai.chat']).toBe(before + 1);
    // 2 input tokens × 1 + 5 output tokens × 2 micro-dollars, once.
    expect(await gw.services.credit.spendable(id)).toBe(1_000_000 - 12);
    expect(await usageRowsOf(gw.services, id)).toHaveLength(1);
  });

  it('replays a streamed answer whole, as recorded, in every chat format', async () => {
    const { id, key } = await gw.createKey({ creditMicros: 1_000_000 });
    const cases = [
      { path: '/v1/chat/completions', body: { ...CHAT, stream: true } },
      { path: '/v1/messages', body: { model: 'claude-sim', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'Hello there' }] } },
      { path: '/v1/responses', body: { model: 'gpt-sim', stream: true, input: 'Hello there' } },
      { path: '/v1beta/models/sim-chat:streamGenerateContent?alt=sse', body: { contents: [{ role: 'user', parts: [{ text: 'Hello there' }] }] } },
      { path: '/v1beta/models/sim-chat:generateContent', body: { contents: [{ role: 'user', parts: [{ text: 'Hello there' }] }] } },
      { path: '/v1/responses', body: { model: 'gpt-sim', input: 'Hello there' } },
    ];
    for (const c of cases) {
      const idem = freshKey();
      const before = total(await upstreamCalls(sim));
      const first = await send(gw, c.path, key, c.body, idem);
      expect(first.status, c.path).toBe(200);
      const again = await send(gw, c.path, key, c.body, idem);
      expect(again.status, c.path).toBe(200);
      expect(again.headers.get('idempotent-replayed'), c.path).toBe('true');
      expect(again.headers.get('content-type'), c.path).toBe(first.headers.get('content-type'));
      expect(again.text, c.path).toBe(first.text);
      if (c.body.stream) expect(again.text, c.path).toMatch(/^(event|data): /);
      expect(total(await upstreamCalls(sim)), c.path).toBe(before + 1);
    }
    await eventually(async () => (await usageRowsOf(gw.services, id)).length >= cases.length, 10_000, 'ledger rows');
    expect(await usageRowsOf(gw.services, id)).toHaveLength(cases.length);
  });

  it('answers 422 idempotency_key_reused to the same key with another body or path, in the family shape', async () => {
    const { key } = await gw.createKey();
    const idem = freshKey();
    expect((await send(gw, '/v1/chat/completions', key, CHAT, idem)).status).toBe(200);
    const before = total(await upstreamCalls(sim));
    const other = await send(gw, '/v1/chat/completions', key, { ...CHAT, messages: [{ role: 'user', content: 'Something else' }] }, idem);
    expect(other.status).toBe(422);
    expect(JSON.parse(other.text).error).toMatchObject({ code: 'idempotency_key_reused', param: 'Idempotency-Key' });
    const anthropic = await send(gw, '/v1/messages', key, { model: 'claude-sim', max_tokens: 50, messages: [{ role: 'user', content: 'Hello there' }] }, idem);
    expect(anthropic.status).toBe(422);
    expect(JSON.parse(anthropic.text)).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    expect(JSON.parse(anthropic.text).error.message).toMatch(/Idempotency-Key was already used with a different request/);
    // Whitespace is part of the body's bytes: a different body.
    expect((await send(gw, '/v1/chat/completions', key, JSON.stringify(CHAT, null, 2), idem)).status).toBe(422);
    expect(total(await upstreamCalls(sim))).toBe(before);
  });

  it('keeps keys per API key: another key with the same Idempotency-Key runs its own request', async () => {
    const a = await gw.createKey();
    const b = await gw.createKey();
    const idem = freshKey();
    const before = total(await upstreamCalls(sim));
    const first = await send(gw, '/v1/chat/completions', a.key, CHAT, idem);
    const second = await send(gw, '/v1/chat/completions', b.key, CHAT, idem);
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(second.headers.get('idempotent-replayed')).toBeNull();
    expect(JSON.parse(second.text).id).not.toBe(JSON.parse(first.text).id);
    expect(total(await upstreamCalls(sim))).toBe(before + 2);
    expect(await usageRowsOf(gw.services, b.id)).toHaveLength(1);
  });

  it('refuses a malformed Idempotency-Key with 400 naming the rule, before any upstream call', async () => {
    const { key } = await gw.createKey();
    const before = total(await upstreamCalls(sim));
    for (const bad of ['', 'k'.repeat(256), 'caf\u00e9']) {
      const res = await send(gw, '/v1/chat/completions', key, CHAT, bad);
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect(JSON.parse(res.text).error).toMatchObject({ code: 'invalid_idempotency_key', param: 'Idempotency-Key' });
      expect(JSON.parse(res.text).error.message).toMatch(/1 to 255 printable ASCII characters/);
    }
    const control = await rawPost(gw, '/v1/chat/completions', key, 'a\tb');
    expect(control.status).toBe(400);
    expect(control.body.error.code).toBe('invalid_idempotency_key');
    // Sent twice: Node would join the two values into one that looks valid.
    const twice = await rawPost(gw, '/v1/chat/completions', key, 'one\r\nIdempotency-Key: two');
    expect(twice.status).toBe(400);
    expect(twice.body.error.code).toBe('invalid_idempotency_key');
    // A comma inside one value is fine.
    expect((await send(gw, '/v1/chat/completions', key, CHAT, `a,b-${freshKey()}`)).status).toBe(200);
    // 255 printable characters, spaces inside included, are fine.
    const longest = 'a b~'.repeat(63) + 'xyz';
    expect(longest).toHaveLength(255);
    expect((await send(gw, '/v1/chat/completions', key, CHAT, longest)).status).toBe(200);
    expect(total(await upstreamCalls(sim))).toBe(before + 2);
  });

  it('runs two duplicates that arrive at once only once: the second waits and gets the first answer', async () => {
    const { id, key } = await gw.createKey({ creditMicros: 1_000_000 });
    const idem = freshKey();
    await rig.fault({ kind: 'latency', ms: 700, match: 'openai.chat' });
    const before = (await upstreamCalls(sim))['openai.chat'] ?? 0;
    const [a, b] = await Promise.all([send(gw, '/v1/chat/completions', key, CHAT, idem), send(gw, '/v1/chat/completions', key, CHAT, idem)]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect([a.headers.get('idempotent-replayed'), b.headers.get('idempotent-replayed')].sort()).toEqual([null, 'true'].sort());
    expect(a.text).toBe(b.text);
    expect((await upstreamCalls(sim))['openai.chat']).toBe(before + 1);
    expect(await gw.services.credit.spendable(id)).toBe(1_000_000 - 12);
    expect(await usageRowsOf(gw.services, id)).toHaveLength(1);
  });

  it('keeps a refusal of the request itself (404 unknown model) and replays it', async () => {
    const { key } = await gw.createKey();
    const idem = freshKey();
    const first = await send(gw, '/v1/chat/completions', key, { ...CHAT, model: 'no-such-model' }, idem);
    expect(first.status).toBe(404);
    const again = await send(gw, '/v1/chat/completions', key, { ...CHAT, model: 'no-such-model' }, idem);
    expect(again.status).toBe(404);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.text).toBe(first.text);
  });

  it('does not keep an upstream failure or a stream the upstream broke off: the retry calls the upstream again', async () => {
    const { key } = await gw.createKey();
    const idem = freshKey();
    await rig.fault({ kind: 'status', status: 500, match: 'openai.chat', count: 10 });
    const failed = await send(gw, '/v1/chat/completions', key, CHAT, idem);
    expect(failed.status).toBeGreaterThanOrEqual(500);
    await fetch(`${sim.url}/__sim/faults`, { method: 'DELETE' });
    const before = (await upstreamCalls(sim))['openai.chat'] ?? 0;
    const retried = await send(gw, '/v1/chat/completions', key, CHAT, idem);
    expect(retried.status).toBe(200);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
    expect((await upstreamCalls(sim))['openai.chat']).toBe(before + 1);

    const streamed = freshKey();
    await rig.fault({ kind: 'truncate', match: 'openai.chat' });
    const cut = await send(gw, '/v1/chat/completions', key, { ...CHAT, stream: true }, streamed);
    expect(cut.status).toBe(200);
    expect(cut.text).toMatch(/error/);
    const whole = await send(gw, '/v1/chat/completions', key, { ...CHAT, stream: true }, streamed);
    expect(whole.headers.get('idempotent-replayed')).toBeNull();
    expect(whole.text).toMatch(/\[DONE\]/);
    expect((await send(gw, '/v1/chat/completions', key, { ...CHAT, stream: true }, streamed)).headers.get('idempotent-replayed')).toBe('true');
  });

  it('replays image generations and multipart edits (a retry with a new form boundary is the same request)', async () => {
    const { id, key } = await gw.createKey({ creditMicros: 1_000_000 });
    const idem = freshKey();
    const gen = { model: 'sim-image', prompt: 'a lighthouse', n: 1, response_format: 'b64_json' };
    const first = await send(gw, '/v1/images/generations', key, gen, idem);
    expect(first.status).toBe(200);
    const again = await send(gw, '/v1/images/generations', key, gen, idem);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.text).toBe(first.text);

    const png = photo(16, 12);
    const form = () => {
      const f = new FormData();
      f.append('model', 'sim-image');
      f.append('prompt', 'add a red balloon');
      f.append('response_format', 'b64_json');
      f.append('image', new Blob([png], { type: 'image/png' }), 'photo.png');
      return f;
    };
    const edit = (body: FormData, idemKey: string) =>
      fetch(`${gw.url}/v1/images/edits`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'idempotency-key': idemKey }, body }).then(async (r) => ({
        status: r.status,
        replayed: r.headers.get('idempotent-replayed'),
        text: await r.text(),
      }));
    const editKey = freshKey();
    const before = total(await upstreamCalls(sim));
    const e1 = await edit(form(), editKey);
    expect(e1.status).toBe(200);
    const e2 = await edit(form(), editKey);
    expect(e2).toMatchObject({ status: 200, replayed: 'true', text: e1.text });
    expect(total(await upstreamCalls(sim))).toBe(before + 1);
    // Another file under the same key is another request.
    const other = new FormData();
    other.append('model', 'sim-image');
    other.append('prompt', 'add a red balloon');
    other.append('response_format', 'b64_json');
    other.append('image', new Blob([photo(16, 13)], { type: 'image/png' }), 'photo.png');
    expect((await edit(other, editKey)).status).toBe(422);
    expect(await usageRowsOf(gw.services, id)).toHaveLength(3);
  });
});

describe('Idempotency-Key while the first request runs, and after it expired', () => {
  let rig: ChatRig;
  let sim: Simulator;
  let gw: TestGateway;
  beforeAll(async () => {
    rig = await startChatRig({ config: { idempotency: { ttl_s: 1, wait_s: 0 } } });
    ({ sim, gw } = rig);
  });
  afterAll(async () => rig.close());

  it('answers 409 idempotency_in_progress with Retry-After when the repeat may not wait, then replays once the first is done', async () => {
    const { key } = await gw.createKey();
    const idem = freshKey();
    await rig.fault({ kind: 'latency', ms: 800, match: 'openai.chat' });
    const first = send(gw, '/v1/chat/completions', key, CHAT, idem);
    await eventually(async () => ((await upstreamCalls(sim))['openai.chat'] ?? 0) >= 1, 5_000, 'the first request upstream');
    const busy = await send(gw, '/v1/chat/completions', key, CHAT, idem);
    expect(busy.status).toBe(409);
    expect(busy.headers.get('retry-after')).toBe('1');
    expect(JSON.parse(busy.text).error).toMatchObject({ code: 'idempotency_in_progress' });
    expect((await first).status).toBe(200);
    // The answer is kept just after it was sent: until then a repeat still gets 409.
    const again = await eventually(async () => {
      const r = await send(gw, '/v1/chat/completions', key, CHAT, idem);
      return r.status === 409 ? undefined : r;
    }, 5_000, 'the kept answer');
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect((await upstreamCalls(sim))['openai.chat']).toBe(1);
  });

  it('runs a request anew once its key expired (idempotency.ttl_s), and the sweep removes expired keys', async () => {
    const { id, key } = await gw.createKey();
    const idem = freshKey();
    const before = (await upstreamCalls(sim))['openai.chat'] ?? 0;
    expect((await send(gw, '/v1/chat/completions', key, CHAT, idem)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1100));
    const later = await send(gw, '/v1/chat/completions', key, { ...CHAT, messages: [{ role: 'user', content: 'Another question' }] }, idem);
    expect(later.status).toBe(200);
    expect(later.headers.get('idempotent-replayed')).toBeNull();
    expect((await upstreamCalls(sim))['openai.chat']).toBe(before + 2);
    const rows = () => gw.services.store.db.selectFrom('idempotency_keys').select('idem_key').where('key_id', '=', id).execute();
    // On SQLite the kept answer is written with the ledger's next batch.
    await gw.services.ledger.flush();
    expect(await rows()).toHaveLength(1);
    expect(await new IdempotencyRepo(gw.services.store.db).sweep(Date.now() + 1100)).toBeGreaterThanOrEqual(1);
    expect(await rows()).toHaveLength(0);
  });
});

describe('Idempotency-Key on video creates, and its claims in the store (embedded simulator)', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    const d = embeddedDefault({});
    gw = await startGateway({ channels: d.channels, models: d.models });
  });
  afterAll(async () => gw.close());

  const tasksOf = (keyId: string) => gw.services.store.db.selectFrom('tasks').select('task_id').where('key_id', '=', keyId).execute();

  it('replays a create on every video API with the same task id: one task, one ledger row each', async () => {
    const { id, key } = await gw.createKey({ creditMicros: 50_000_000 });
    const cases = [
      { path: '/v1/video/generations', body: { model: 'sim-video', prompt: 'a corgi' }, idOf: (b: any) => b.data.task_id },
      { path: '/v1/videos', body: { model: 'sim-video', prompt: 'a corgi' }, idOf: (b: any) => b.id },
      { path: '/v1beta/models/veo-3.1-fast-generate-preview:predictLongRunning', body: { instances: [{ prompt: 'a corgi' }] }, idOf: (b: any) => b.name },
    ];
    for (const c of cases) {
      const idem = freshKey();
      const first = await send(gw, c.path, key, c.body, idem);
      expect(first.status, `${c.path}: ${first.text}`).toBe(200);
      const again = await send(gw, c.path, key, c.body, idem);
      expect(again.status, c.path).toBe(200);
      expect(again.headers.get('idempotent-replayed'), c.path).toBe('true');
      expect(c.idOf(JSON.parse(again.text)), c.path).toBe(c.idOf(JSON.parse(first.text)));
    }
    expect(await tasksOf(id)).toHaveLength(cases.length);
    // One create row per task (none for a replay) and, once it finished, one settle row.
    const rows = () => usageRowsOf(gw.services, id);
    await eventually(async () => (await rows()).filter((r) => r.endpoint === 'video.settle').length >= cases.length, 15_000, 'the tasks to settle');
    expect((await rows()).map((r) => r.endpoint).sort()).toEqual([...cases.map(() => 'video'), ...cases.map(() => 'video.settle')]);
  });

  it('answers a malformed key in the video family shape', async () => {
    const { key } = await gw.createKey();
    const res = await send(gw, '/v1/video/generations', key, { model: 'sim-video', prompt: 'a corgi' }, 'k'.repeat(256));
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text)).toMatchObject({ code: 'invalid_idempotency_key', data: null });
  });

  it('a claim whose instance stopped renewing it is taken over; one still leased is neither taken over nor swept', async () => {
    const repo = new IdempotencyRepo(gw.services.store.db);
    const now = Date.now();
    const claim = (owner: string, at: number, ttl = 60_000) => repo.claim({ keyId: 'key_t', idemKey: 'k1', fingerprint: 'f', owner, now: at, expiresAt: at + ttl, leaseUntil: at + 30_000 });
    expect(await claim('a', now, 1_000)).toEqual({ kind: 'claimed' });
    // Past its expiry but still leased: the request runs, its key stays.
    expect(await claim('b', now + 5_000)).toEqual({ kind: 'running' });
    expect(await repo.sweep(now + 5_000)).toBe(0);
    // Lease over: the next claim takes it over; the old owner can no longer keep an answer.
    expect(await claim('c', now + 31_000)).toEqual({ kind: 'claimed' });
    await repo.complete('key_t', 'k1', 'a', { status: 200, headers: {}, body: Buffer.from('stale') });
    await repo.complete('key_t', 'k1', 'c', { status: 201, headers: { 'content-type': 'text/plain' }, body: Buffer.from('kept') });
    const done = await claim('d', now + 32_000);
    expect(done).toMatchObject({ kind: 'done', answer: { status: 201, headers: { 'content-type': 'text/plain' } } });
    expect(done.kind === 'done' && done.answer.body.toString()).toBe('kept');
    // A released claim frees the key at once.
    expect(await repo.claim({ keyId: 'key_t', idemKey: 'k2', fingerprint: 'f', owner: 'e', now, expiresAt: now + 60_000, leaseUntil: now + 30_000 })).toEqual({ kind: 'claimed' });
    await repo.release('key_t', 'k2', 'e');
    expect(await repo.claim({ keyId: 'key_t', idemKey: 'k2', fingerprint: 'other', owner: 'f', now, expiresAt: now + 60_000, leaseUntil: now + 30_000 })).toEqual({ kind: 'claimed' });
  });
});
