import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { eventually, ledgerRows, noOpenUpstream, post, startChatRig, type ChatRig } from './helpers/chat.js';

// A client that goes away mid-stream: the gateway aborts its upstream request, so the simulator
// sees its connection closed before the stream ended (its `disconnects` counter), nothing stays
// open, and only what was delivered is billed (ledger status 499).

// A long answer streamed slowly: 60 words at 40 ms per event outlast any client here.
const PROMPT = Array.from({ length: 60 }, (_, i) => `word${i}`).join(' ');

describe('client disconnect', () => {
  let rig: ChatRig;
  beforeAll(async () => {
    rig = await startChatRig();
    await fetch(`${rig.sim.url}/__sim/chat`, { method: 'POST', body: JSON.stringify({ stream_delay_ms: 40 }) });
  });
  afterAll(async () => rig.close());

  const cases: [string, string, string, Record<string, unknown>][] = [
    ['an OpenAI client of an openai channel', '/v1/chat/completions', 'openai.chat', { model: 'gpt-sim' }],
    ['an OpenAI client of an anthropic channel', '/v1/chat/completions', 'anthropic.messages', { model: 'claude-sim' }],
    ['an Anthropic client of an anthropic channel', '/v1/messages', 'anthropic.messages', { model: 'claude-sim', max_tokens: 500 }],
    ['an Anthropic client of an openai channel', '/v1/messages', 'openai.chat', { model: 'gpt-sim', max_tokens: 500 }],
  ];

  it.each(cases)('closes the upstream connection when %s leaves', async (_name, path, route, extra) => {
    const before = (await rig.stats()).disconnects[route] ?? 0;
    const rowsBefore = (await ledgerRows(rig)).length;
    const abort = new AbortController();
    const res = await post(rig, path, { ...extra, stream: true, messages: [{ role: 'user', content: PROMPT }] }, rig.key, abort.signal);
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(first.done).toBe(false);
    abort.abort();
    await reader.cancel().catch(() => undefined);

    await eventually(async () => ((await rig.stats()).disconnects[route] ?? 0) === before + 1, 10_000, 'the simulator to see the upstream connection close');
    await noOpenUpstream(rig);
    await eventually(async () => (await ledgerRows(rig)).length === rowsBefore + 1, 10_000, 'the ledger row');
    const rows = await ledgerRows(rig);
    const row = rows[rows.length - 1];
    expect(row.status).toBe(499);
    // Billed for the input and what was delivered, not for the whole answer (60+ tokens).
    expect(row.input_units).toBeGreaterThan(0);
    expect(row.output_units).toBeLessThan(60);
  });

  it('closes the upstream connection when the OpenAI SDK aborts its stream', async () => {
    const before = (await rig.stats()).disconnects['openai.chat'] ?? 0;
    const client = new OpenAI({ apiKey: rig.key, baseURL: `${rig.gw.url}/v1`, maxRetries: 0 });
    const stream = await client.chat.completions.create({ model: 'gpt-sim', stream: true, messages: [{ role: 'user', content: PROMPT }] });
    let chunks = 0;
    for await (const _chunk of stream) {
      if (++chunks === 3) break; // leaving the loop aborts the SDK's request
    }
    await eventually(async () => ((await rig.stats()).disconnects['openai.chat'] ?? 0) === before + 1, 10_000, 'the upstream connection to close');
    await noOpenUpstream(rig);
  });

  it('closes the upstream connection when a non-streamed request is abandoned', async () => {
    // A 2-second latency fault keeps the upstream answer pending while the client leaves.
    await rig.fault({ match: 'openai.chat', kind: 'latency', ms: 2000, count: 1 });
    const before = (await rig.stats()).disconnects['openai.chat'] ?? 0;
    const rowsBefore = (await ledgerRows(rig)).length;
    const abort = new AbortController();
    const pending = post(rig, '/v1/chat/completions', { model: 'gpt-sim', messages: [{ role: 'user', content: 'hi' }] }, rig.key, abort.signal).catch((e: Error) => e);
    await eventually(async () => (await rig.stats()).open === 1, 10_000, 'the upstream request to arrive');
    abort.abort();
    expect(await pending).toBeInstanceOf(Error);
    await eventually(async () => ((await rig.stats()).disconnects['openai.chat'] ?? 0) === before + 1, 10_000, 'the upstream connection to close');
    await noOpenUpstream(rig);
    await eventually(async () => (await ledgerRows(rig)).length === rowsBefore + 1, 10_000, 'the ledger row');
    const rows = await ledgerRows(rig);
    expect(rows[rows.length - 1]).toMatchObject({ status: 499, cost_micros: 0 });
  });
});
