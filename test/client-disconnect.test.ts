import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { eventually, ledgerRows, noOpenUpstream, post, type ChatRig } from './helpers/chat.js';
import { MODEL_OF, WIRE_FORMATS, startFormatsRig, type WireFormat } from './helpers/chat-formats.js';

// A client that goes away mid-stream: the gateway aborts its upstream request, so the simulator
// sees its connection closed before the stream ended (its `disconnects` counter), nothing stays
// open, and only what was delivered is billed (ledger status 499).

// A long answer streamed slowly: 60 words at 40 ms per event outlast any client here.
const PROMPT = Array.from({ length: 60 }, (_, i) => `word${i}`).join(' ');

describe('client disconnect', () => {
  let rig: ChatRig;
  beforeAll(async () => {
    rig = await startFormatsRig();
    await fetch(`${rig.sim.url}/__sim/chat`, { method: 'POST', body: JSON.stringify({ stream_delay_ms: 40 }) });
  });
  afterAll(async () => rig.close());

  // Every client format × every upstream format: the same streamed request in the client's own
  // shape, to the model whose only channel speaks the upstream's.
  const request: Record<WireFormat, (model: string) => { path: string; body: Record<string, unknown> }> = {
    openai: (model) => ({ path: '/v1/chat/completions', body: { model, stream: true, messages: [{ role: 'user', content: PROMPT }] } }),
    anthropic: (model) => ({ path: '/v1/messages', body: { model, max_tokens: 500, stream: true, messages: [{ role: 'user', content: PROMPT }] } }),
    responses: (model) => ({ path: '/v1/responses', body: { model, stream: true, input: PROMPT } }),
    gemini: (model) => ({ path: `/v1beta/models/${model}:streamGenerateContent?alt=sse`, body: { contents: [{ role: 'user', parts: [{ text: PROMPT }] }] } }),
  };
  const route: Record<WireFormat, string> = { openai: 'openai.chat', anthropic: 'anthropic.messages', responses: 'openai.responses', gemini: 'gemini.generate' };
  const cases = WIRE_FORMATS.flatMap((client) => WIRE_FORMATS.map((upstream) => [client, upstream] as const));

  it.each(cases)('closes the upstream connection and bills only what was delivered when a %s client of a %s channel leaves', async (client, upstream) => {
    const before = (await rig.stats()).disconnects[route[upstream]] ?? 0;
    const rowsBefore = (await ledgerRows(rig)).length;
    const abort = new AbortController();
    const { path, body } = request[client](MODEL_OF[upstream]);
    const res = await post(rig, path, body, rig.key, abort.signal);
    expect(res.status).toBe(200);
    // Leave once some of the answer's text ("You said: word0 …") has arrived.
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let received = '';
    while (!received.includes('said')) {
      const chunk = await reader.read();
      expect(chunk.done).toBe(false);
      received += decoder.decode(chunk.value, { stream: true });
    }
    abort.abort();
    await reader.cancel().catch(() => undefined);

    await eventually(async () => ((await rig.stats()).disconnects[route[upstream]] ?? 0) === before + 1, 10_000, 'the simulator to see the upstream connection close');
    await noOpenUpstream(rig);
    await eventually(async () => (await ledgerRows(rig)).length === rowsBefore + 1, 10_000, 'the ledger row');
    const rows = await ledgerRows(rig);
    // One row for the request, never a second one for the same stream.
    expect(rows).toHaveLength(rowsBefore + 1);
    const row = rows[rows.length - 1];
    expect(row).toMatchObject({ model: MODEL_OF[upstream], status: 499 });
    // Billed for the input and what was delivered, not for the whole answer (62 tokens).
    expect(row.input_units).toBeGreaterThan(0);
    expect(row.output_units).toBeGreaterThan(0);
    expect(row.output_units).toBeLessThan(60);
    expect(Number(row.cost_micros)).toBeGreaterThan(0);
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
