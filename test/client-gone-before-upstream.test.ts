import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from 'node:net';
import { eventually, ledgerRows, startChatRig, type ChatRig } from './helpers/chat.js';
import { startGateway, usageRowsOf, type TestGateway } from './helpers/gateway.js';

// A client that sends its whole request and leaves at once, before the gateway called the
// upstream: no upstream call is made for nobody, nothing is billed, and the ledger row says 499.
// The key has limited credit, so the credit hold (a database write) stands between the request's
// arrival and the upstream call: the moment a listener attached only after it would miss.

function sendAndLeave(port: number, path: string, key: string, body: unknown, how: 'end' | 'destroy'): Promise<void> {
  return new Promise((resolve) => {
    const text = JSON.stringify(body);
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`, () => {
        if (how === 'end') socket.end();
        else socket.destroy();
        resolve();
      });
    });
    socket.on('error', () => undefined);
  });
}

describe('a client gone before the upstream call', () => {
  let rig: ChatRig;
  let port: number;

  beforeAll(async () => {
    rig = await startChatRig({ creditMicros: 50_000_000 });
    port = Number(new URL(rig.gw.url).port);
  });
  afterAll(async () => rig?.close());

  const cases: Array<[string, string, string, Record<string, unknown>, 'end' | 'destroy']> = [
    ['a chat completion (client half-closes)', '/v1/chat/completions', 'openai.chat', { model: 'gpt-sim', messages: [{ role: 'user', content: 'hi' }] }, 'end'],
    ['a chat completion (connection reset)', '/v1/chat/completions', 'openai.chat', { model: 'gpt-sim', messages: [{ role: 'user', content: 'hi' }] }, 'destroy'],
    ['a streamed chat', '/v1/chat/completions', 'openai.chat', { model: 'gpt-sim', stream: true, messages: [{ role: 'user', content: 'hi' }] }, 'destroy'],
    ['an Anthropic message', '/v1/messages', 'anthropic.messages', { model: 'claude-sim', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] }, 'destroy'],
    ['an image generation', '/v1/images/generations', 'openai.images.generate', { model: 'sim-image', prompt: 'a cat' }, 'destroy'],
  ];

  it.each(cases)('makes no upstream call and writes a 499 row for %s', async (_name, path, route, body, how) => {
    const before = (await rig.stats()).counts;
    const rowsBefore = (await ledgerRows(rig)).length;
    await sendAndLeave(port, path, rig.key, body, how);
    await eventually(async () => (await ledgerRows(rig)).length === rowsBefore + 1, 10_000, 'the ledger row');
    const row = (await ledgerRows(rig)).at(-1)!;
    expect(Number(row.status)).toBe(499);
    expect(Number(row.cost_micros)).toBe(0);
    const after = (await rig.stats()).counts;
    expect(after[route] ?? 0).toBe(before[route] ?? 0);
    // Nothing stays held for the departed client.
    expect(await rig.gw.services.reservations.heldCount(rig.keyId)).toBe(0);
  });
});

describe('a client gone before its video task was created', () => {
  let gw: TestGateway;
  let key: { id: string; key: string };
  beforeAll(async () => {
    gw = await startGateway();
    key = await gw.createKey({ creditMicros: 50_000_000 });
  });
  afterAll(async () => gw?.close());

  const creates = async () => {
    const stats = (await (await fetch(`${gw.services.simulator!.url}/__sim/stats`)).json()) as { counts: Record<string, number> };
    return Object.entries(stats.counts)
      .filter(([name]) => /video\.create/.test(name))
      .reduce((s, [, n]) => s + n, 0);
  };

  it('creates no provider task and writes a 499 row', async () => {
    const before = await creates();
    await sendAndLeave(Number(new URL(gw.url).port), '/v1/video/generations', key.key, { model: 'sim-video', prompt: 'a corgi' }, 'destroy');
    await eventually(async () => (await usageRowsOf(gw.services, key.id)).length === 1, 10_000, 'the ledger row');
    const [row] = await usageRowsOf(gw.services, key.id);
    expect(Number(row.status)).toBe(499);
    expect(await creates()).toBe(before);
    expect(await gw.services.reservations.heldCount(key.id)).toBe(0);
    const tasks = await gw.services.store.db.selectFrom('tasks').select('task_id').where('key_id', '=', key.id).execute();
    expect(tasks).toEqual([]);
  });
});
