import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startChatRig, post, type ChatRig } from './helpers/chat.js';
import { errorShapeProblem } from './helpers/error-shapes.js';

// Stored Responses state is bounded: what previous_response_id and item_reference expand a request
// to counts against server.body_limit_mb (413 before any upstream call), a conversation is stored
// once (each turn keeps only its own items, not the history again), and one key keeps at most
// responses.max_per_key responses and responses.max_mb_per_key of them, the least recently used
// evicted first.

const MODEL = 'gpt-sim';
const TEXT_100K = `${'word '.repeat(19_999)}word`;

function userItem(text: string, id?: string) {
  return { type: 'message', ...(id ? { id } : {}), role: 'user', content: [{ type: 'input_text', text }] };
}

async function create(rig: ChatRig, body: Record<string, unknown>, key = rig.key): Promise<{ status: number; body: any }> {
  const res = await post(rig, '/v1/responses', { model: MODEL, max_output_tokens: 5, ...body }, key);
  return { status: res.status, body: await res.json() };
}

async function retrieve(rig: ChatRig, id: string, key = rig.key): Promise<number> {
  const res = await fetch(`${rig.gw.url}/v1/responses/${id}`, { headers: { authorization: `Bearer ${key}` } });
  await res.arrayBuffer();
  return res.status;
}

async function upstreamCalls(rig: ChatRig): Promise<number> {
  const { counts } = await rig.stats();
  return Object.entries(counts).reduce((n, [route, c]) => (route.startsWith('control.') ? n : n + c), 0);
}

describe('Responses state bounds', () => {
  let rig: ChatRig;
  beforeAll(async () => {
    rig = await startChatRig();
  });
  afterAll(async () => rig.close());
  beforeEach(() => {
    const c = rig.gw.services.config;
    c.server.body_limit_mb = 0.7;
    c.responses.max_per_key = 10_000;
    c.responses.max_mb_per_key = 100;
  });

  it('refuses item references that expand past server.body_limit_mb with 413, before any upstream call', async () => {
    const ids = Array.from({ length: 8 }, (_, i) => `msg_big${i}`);
    for (const id of ids) expect((await create(rig, { input: [userItem(TEXT_100K, id)] })).status).toBe(200);
    const refs = (n: number) => ids.slice(0, n).map((id) => ({ type: 'item_reference', id }));
    // Five items (about 500 KB) fit under 0.7 MB; eight (about 800 KB) from a 300-byte request do not.
    const five = await create(rig, { input: refs(5) });
    expect(five.status).toBe(200);
    expect(five.body.usage.input_tokens).toBe(5 * 20_000);
    const calls = await upstreamCalls(rig);
    const eight = await create(rig, { input: refs(8) });
    expect(eight.status).toBe(413);
    expect(errorShapeProblem('openai', eight.body)).toBeNull();
    expect(eight.body.error.code).toBe('request_too_large');
    expect(eight.body.error.message).toMatch(/0\.7 MB/);
    expect(await upstreamCalls(rig)).toBe(calls);
  });

  it('refuses an item referenced more than once in a request (400), so one stored item cannot be multiplied', async () => {
    expect((await create(rig, { input: [userItem('a short one', 'msg_once')] })).status).toBe(200);
    const calls = await upstreamCalls(rig);
    const again = await create(rig, { input: Array.from({ length: 400 }, () => ({ type: 'item_reference', id: 'msg_once' })) });
    expect(again.status).toBe(400);
    expect(errorShapeProblem('openai', again.body)).toBeNull();
    expect(again.body.error).toMatchObject({ code: 'invalid_request', param: 'input[1]' });
    expect(again.body.error.message).toContain('msg_once');
    expect(await upstreamCalls(rig)).toBe(calls);
  });

  it('stores a conversation once and refuses the turn whose history passes the limit', async () => {
    let previous: string | null = null;
    const ids: string[] = [];
    let refused = 0;
    for (let turn = 1; turn <= 10; turn++) {
      const calls = await upstreamCalls(rig);
      const r = await create(rig, { input: TEXT_100K, ...(previous ? { previous_response_id: previous } : {}) });
      if (r.status !== 200) {
        expect(r.status).toBe(413);
        expect(errorShapeProblem('openai', r.body)).toBeNull();
        expect(await upstreamCalls(rig)).toBe(calls);
        refused = turn;
        break;
      }
      expect(r.body.usage.input_tokens).toBe(turn * 20_000 + (turn - 1) * 5);
      ids.push(r.body.id);
      previous = r.body.id;
    }
    // Each turn adds about 100 KB: seven fit in 0.7 MB, the eighth does not.
    expect(refused).toBe(8);
    // Stored once: the seven turns' rows hold about seven turns of input, not 1 + 2 + … + 7.
    const rows = await rig.gw.services.store.db.selectFrom('responses').select('input_items').where('id', 'in', ids).execute();
    const stored = rows.reduce((n, r) => n + r.input_items.length, 0);
    expect(stored).toBeLessThan(ids.length * 110_000);
  });

  it('answers 404 naming the earlier response a conversation lost', async () => {
    const a = await create(rig, { input: 'first turn' });
    const b = await create(rig, { input: 'second turn', previous_response_id: a.body.id });
    expect(b.status).toBe(200);
    const del = await fetch(`${rig.gw.url}/v1/responses/${a.body.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${rig.key}` } });
    expect(del.status).toBe(200);
    const c = await create(rig, { input: 'third turn', previous_response_id: b.body.id });
    expect(c.status).toBe(404);
    expect(errorShapeProblem('openai', c.body)).toBeNull();
    expect(c.body.error.message).toContain(a.body.id);
    expect(c.body.error.param).toBe('previous_response_id');
  });

  it('keeps at most responses.max_per_key per key, evicting the least recently used', async () => {
    const { id: keyId, key } = await rig.gw.createKey();
    rig.gw.services.config.responses.max_per_key = 3;
    const a = (await create(rig, { input: 'conversation start' }, key)).body.id;
    const x = (await create(rig, { input: 'unrelated one' }, key)).body.id;
    // Continuing a conversation renews its earlier turns: x is now the least recently used.
    const b = (await create(rig, { input: 'conversation goes on', previous_response_id: a }, key)).body.id;
    const y = (await create(rig, { input: 'unrelated two' }, key)).body.id;
    expect(await retrieve(rig, x, key)).toBe(404);
    for (const id of [a, b, y]) expect(await retrieve(rig, id, key)).toBe(200);
    const c = await create(rig, { input: 'and on', previous_response_id: b }, key);
    expect(c.status).toBe(200);
    expect(c.body.usage.input_tokens).toBeGreaterThan(6);
    // Continuing renewed a and b again: y was the least recently used.
    expect(await retrieve(rig, y, key)).toBe(404);
    // The rig's own key is not touched by this key's cap.
    const mine = (await create(rig, { input: 'my own' })).body.id;
    expect(await retrieve(rig, mine)).toBe(200);
    const kept = await rig.gw.services.store.db.selectFrom('responses').select('id').where('key_id', '=', keyId).execute();
    expect(kept.map((r) => r.id).sort()).toEqual([a, b, c.body.id].sort());
  });

  it('keeps at most responses.max_mb_per_key per key, evicting the oldest', async () => {
    const { key } = await rig.gw.createKey();
    rig.gw.services.config.responses.max_mb_per_key = 0.25;
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await create(rig, { input: TEXT_100K }, key)).body.id);
    // About 100 KB each: two fit in 0.25 MB.
    expect(await Promise.all(ids.map((id) => retrieve(rig, id, key)))).toEqual([404, 404, 200, 200]);
  });
});
