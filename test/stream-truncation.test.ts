import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { ledgerRows, ledgerRowsWhen, noOpenUpstream, post, startChatRig, type ChatRig } from './helpers/chat.js';

// An upstream stream cut in the middle (the simulator destroys its socket after a few events),
// after the gateway already started answering: the client's stream ends with a well-formed error
// event in its own format, the ledger records the failure, and what was delivered is billed.

const PROMPT = 'one two three four five six seven eight nine ten';

describe('a stream cut mid-way', () => {
  let rig: ChatRig;
  beforeAll(async () => {
    rig = await startChatRig({ relay: { breaker_failures: 1000 } });
  });
  afterAll(async () => rig.close());
  afterEach(async () => {
    await fetch(`${rig.sim.url}/__sim/faults`, { method: 'DELETE' });
  });

  const routeOf = (model: string) => (model === 'claude-sim' ? 'anthropic.messages' : 'openai.chat');

  it.each(['gpt-sim', 'claude-sim'])('ends an OpenAI-format stream from %s with an error chunk', async (model) => {
    const seen = (await ledgerRows(rig)).length;
    await rig.fault({ match: routeOf(model), kind: 'truncate', count: 1 });
    const res = await post(rig, '/v1/chat/completions', { model, stream: true, messages: [{ role: 'user', content: PROMPT }] });
    expect(res.status).toBe(200);
    const text = await res.text();
    const frames = text.split('\n\n').filter(Boolean);
    const last = frames[frames.length - 1];
    expect(last.startsWith('data: ')).toBe(true);
    const err = JSON.parse(last.slice(6));
    expect(err.error).toMatchObject({ code: 'upstream_error', type: 'server_error' });
    expect(text).not.toContain('[DONE]');
    // Every frame before it is a whole chunk.
    for (const f of frames.slice(0, -1)) expect(JSON.parse(f.slice(6)).object).toBe('chat.completion.chunk');
    const rows = await ledgerRowsWhen(rig, seen + 1);
    expect(rows[rows.length - 1]).toMatchObject({ model, status: 502, endpoint: 'chat' });
    await noOpenUpstream(rig);
  });

  it.each(['claude-sim', 'gpt-sim'])('ends an Anthropic-format stream from %s with an error event', async (model) => {
    const seen = (await ledgerRows(rig)).length;
    await rig.fault({ match: routeOf(model), kind: 'truncate', count: 1 });
    const res = await post(rig, '/v1/messages', { model, max_tokens: 100, stream: true, messages: [{ role: 'user', content: PROMPT }] });
    expect(res.status).toBe(200);
    const frames = (await res.text()).split('\n\n').filter(Boolean);
    expect(frames[0].startsWith('event: message_start\n')).toBe(true);
    const last = frames[frames.length - 1];
    expect(last.startsWith('event: error\ndata: ')).toBe(true);
    expect(JSON.parse(last.slice('event: error\ndata: '.length))).toMatchObject({ type: 'error', error: { type: 'api_error' } });
    expect(frames.some((f) => f.startsWith('event: message_stop'))).toBe(false);
    const rows = await ledgerRowsWhen(rig, seen + 1);
    expect(rows[rows.length - 1]).toMatchObject({ model, status: 502, endpoint: 'messages' });
    await noOpenUpstream(rig);
  });

  it('makes the official SDKs raise an API error after the partial content', async () => {
    await rig.fault({ match: 'openai.chat', kind: 'truncate', count: 1 });
    const oai = new OpenAI({ apiKey: rig.key, baseURL: `${rig.gw.url}/v1`, maxRetries: 0 });
    const stream = await oai.chat.completions.create({ model: 'gpt-sim', stream: true, messages: [{ role: 'user', content: PROMPT }] });
    let got = '';
    await expect(
      (async () => {
        for await (const c of stream) got += c.choices[0]?.delta.content ?? '';
      })(),
    ).rejects.toBeInstanceOf(OpenAI.APIError);
    expect('You said: one two three'.startsWith(got)).toBe(true);

    await rig.fault({ match: 'anthropic.messages', kind: 'truncate', count: 1 });
    const ant = new Anthropic({ apiKey: rig.key, baseURL: rig.gw.url, maxRetries: 0 });
    await expect(ant.messages.stream({ model: 'claude-sim', max_tokens: 100, messages: [{ role: 'user', content: PROMPT }] }).finalMessage()).rejects.toBeInstanceOf(
      Anthropic.APIError,
    );
  });

  it('bills the delivered part of a cut stream, no more than a whole answer', async () => {
    const { id, key } = await rig.gw.createKey({ creditMicros: 1_000_000 });
    await rig.fault({ match: 'anthropic.messages', kind: 'truncate', count: 1 });
    const res = await post(rig, '/v1/messages', { model: 'claude-sim', max_tokens: 100, stream: true, messages: [{ role: 'user', content: PROMPT }] }, key);
    await res.text();
    const [row] = await ledgerRowsWhen(rig, 1, id);
    expect(row.status).toBe(502);
    // message_start reported the input (10 tokens); the output is what was delivered.
    expect(row.input_units).toBe(10);
    expect(row.output_units).toBeGreaterThan(0);
    expect(row.output_units).toBeLessThan(13);
    expect(row.cost_micros).toBe(row.input_units * 3 + row.output_units * 15);
    expect(await rig.gw.services.credit.spendable(id)).toBe(1_000_000 - row.cost_micros);
  });

  it('retries a non-streamed answer whose body was cut on the next channel, or fails cleanly', async () => {
    await rig.fault({ match: 'openai.chat', kind: 'truncate', count: 1 });
    const res = await post(rig, '/v1/chat/completions', { model: 'gpt-sim', messages: [{ role: 'user', content: 'hi' }] });
    expect(res.status).toBe(502);
    expect(((await res.json()) as any).error.code).toBe('upstream_error');
    await noOpenUpstream(rig);
  });
});

describe('a stream that stalls mid-way', () => {
  let rig: ChatRig;
  beforeAll(async () => {
    // Events 1.5 s apart against a 300 ms limit on the gap between stream events.
    rig = await startChatRig({ relay: { stream_idle_timeout_ms: 300, breaker_failures: 1000 } });
    await fetch(`${rig.sim.url}/__sim/chat`, { method: 'POST', body: JSON.stringify({ stream_delay_ms: 1500 }) });
  });
  afterAll(async () => rig.close());

  it('ends the client stream with an upstream_timeout error and closes the upstream', async () => {
    const res = await post(rig, '/v1/chat/completions', { model: 'gpt-sim', stream: true, messages: [{ role: 'user', content: PROMPT }] });
    expect(res.status).toBe(200);
    const frames = (await res.text()).split('\n\n').filter(Boolean);
    expect(JSON.parse(frames[0].slice(6)).object).toBe('chat.completion.chunk');
    expect(JSON.parse(frames[frames.length - 1].slice(6)).error).toMatchObject({ code: 'upstream_timeout' });
    await noOpenUpstream(rig);
  });

  it('does the same in the Anthropic format', async () => {
    const res = await post(rig, '/v1/messages', { model: 'claude-sim', max_tokens: 100, stream: true, messages: [{ role: 'user', content: PROMPT }] });
    const frames = (await res.text()).split('\n\n').filter(Boolean);
    expect(frames[0].startsWith('event: message_start')).toBe(true);
    expect(frames[frames.length - 1]).toMatch(/^event: error\ndata: \{"type":"error","error":\{"type":"api_error"/);
    await noOpenUpstream(rig);
  });
});
