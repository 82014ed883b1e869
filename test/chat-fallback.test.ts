import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { ledgerRows, ledgerRowsWhen, noOpenUpstream, post, startChatRig, type ChatRig } from './helpers/chat.js';

// Upstream faults (injected in the simulator) before the client got a byte: the gateway moves to
// the next channel, or, with no channel left, answers a clean error in the client's format —
// never a 500 — and leaves no upstream request open.

const MODELS = { dual: { kind: 'chat', owned_by: 'test', price: { input_per_million: 1, output_per_million: 1 } }, solo: { kind: 'chat', owned_by: 'test' } };

const FAULTS: [string, Record<string, unknown>][] = [
  ['HTTP 500', { kind: 'status', status: 500 }],
  ['HTTP 529 overloaded', { kind: 'status', status: 529 }],
  ['HTTP 429', { kind: 'status', status: 429 }],
  ['a connection reset', { kind: 'reset' }],
  ['malformed JSON', { kind: 'malformed' }],
  ['an upstream that hangs', { kind: 'hang' }],
];

describe('fallback to the next channel', () => {
  let rig: ChatRig;
  beforeAll(async () => {
    rig = await startChatRig({
      models: MODELS,
      // A short first-byte timeout so a hanging upstream is given up quickly; a breaker that
      // stays closed so every test reaches the faulty channel first.
      relay: { first_byte_timeout_ms: 500, breaker_failures: 1000 },
      channels: (sim) => [
        { name: 'first', type: 'anthropic', base_url: sim, api_key: 'k1', priority: 0, models: ['dual'] },
        { name: 'second', type: 'openai', base_url: `${sim}/v1`, api_key: 'k2', priority: 1, models: ['dual'] },
      ],
    });
  });
  afterAll(async () => rig.close());
  afterEach(async () => {
    await fetch(`${rig.sim.url}/__sim/faults`, { method: 'DELETE' });
  });

  it.each(FAULTS)('moves an OpenAI-format request on after %s', async (_name, fault) => {
    const before = (await rig.stats()).counts;
    await rig.fault({ match: 'anthropic.messages', count: 1, ...fault });
    const client = new OpenAI({ apiKey: rig.key, baseURL: `${rig.gw.url}/v1`, maxRetries: 0 });
    const c = await client.chat.completions.create({ model: 'dual', messages: [{ role: 'user', content: 'fall back' }] });
    expect(c.choices[0].message.content).toBe('You said: fall back');
    const after = (await rig.stats()).counts;
    expect(after['anthropic.messages'] - (before['anthropic.messages'] ?? 0)).toBe(1);
    expect(after['openai.chat'] - (before['openai.chat'] ?? 0)).toBe(1);
    const rows = await ledgerRows(rig);
    expect(rows[rows.length - 1]).toMatchObject({ channel: 'second', status: 200, endpoint: 'chat', input_units: 2, output_units: 5 });
    await noOpenUpstream(rig);
  });

  it.each(FAULTS)('moves an Anthropic-format stream on after %s', async (_name, fault) => {
    const seen = (await ledgerRows(rig)).length;
    await rig.fault({ match: 'anthropic.messages', count: 1, ...fault });
    const client = new Anthropic({ apiKey: rig.key, baseURL: rig.gw.url, maxRetries: 0 });
    const m = await client.messages.stream({ model: 'dual', max_tokens: 50, messages: [{ role: 'user', content: 'fall back' }] }).finalMessage();
    expect(m.content).toEqual([{ type: 'text', text: 'You said: fall back' }]);
    expect(m.stop_reason).toBe('end_turn');
    const rows = await ledgerRowsWhen(rig, seen + 1);
    expect(rows[rows.length - 1]).toMatchObject({ channel: 'second', status: 200, endpoint: 'messages', output_units: 5 });
    await noOpenUpstream(rig);
  });
});

describe('no channel left', () => {
  let rig: ChatRig;
  beforeAll(async () => {
    rig = await startChatRig({
      models: MODELS,
      relay: { first_byte_timeout_ms: 500, breaker_failures: 1000 },
      channels: (sim) => [{ name: 'only', type: 'openai', base_url: `${sim}/v1`, api_key: 'k', models: ['solo'] }],
    });
  });
  afterAll(async () => rig.close());
  afterEach(async () => {
    await fetch(`${rig.sim.url}/__sim/faults`, { method: 'DELETE' });
  });

  const EXPECTED: [string, Record<string, unknown>, number, string][] = [
    ['HTTP 500', { kind: 'status', status: 500 }, 502, 'upstream_error'],
    ['HTTP 429', { kind: 'status', status: 429 }, 429, 'rate_limit_exceeded'],
    ['a connection reset', { kind: 'reset' }, 502, 'upstream_error'],
    ['malformed JSON', { kind: 'malformed' }, 502, 'upstream_error'],
    ['an upstream that hangs', { kind: 'hang' }, 504, 'upstream_timeout'],
  ];

  it.each(EXPECTED)('answers %s as a clean OpenAI-format error', async (_name, fault, status, code) => {
    await rig.fault({ match: 'openai.chat', count: 1, ...fault });
    const res = await post(rig, '/v1/chat/completions', { model: 'solo', messages: [{ role: 'user', content: 'hi' }] });
    expect(res.status).toBe(status);
    const body = (await res.json()) as any;
    expect(body.error).toMatchObject({ code, param: null });
    expect(typeof body.error.message).toBe('string');
    expect(typeof body.error.type).toBe('string');
    if (status === 429) expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    const rows = await ledgerRows(rig);
    expect(rows[rows.length - 1]).toMatchObject({ status, cost_micros: 0, output_units: 0 });
    await noOpenUpstream(rig);
  });

  it.each(EXPECTED)('answers %s as a clean Anthropic-format error, streamed or not', async (_name, fault, status) => {
    for (const stream of [false, true]) {
      await rig.fault({ match: 'openai.chat', count: 1, ...fault });
      const res = await post(rig, '/v1/messages', { model: 'solo', max_tokens: 20, stream, messages: [{ role: 'user', content: 'hi' }] });
      expect(res.status).toBe(status);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      const body = (await res.json()) as any;
      expect(body.type).toBe('error');
      expect(typeof body.error.type).toBe('string');
      expect(typeof body.error.message).toBe('string');
      await noOpenUpstream(rig);
    }
  });

  it('surfaces the error through the official SDKs as their API errors', async () => {
    await rig.fault({ match: 'openai.chat', count: 1, kind: 'status', status: 500 });
    const oai = new OpenAI({ apiKey: rig.key, baseURL: `${rig.gw.url}/v1`, maxRetries: 0 });
    await expect(oai.chat.completions.create({ model: 'solo', messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({ status: 502, code: 'upstream_error' });
    await rig.fault({ match: 'openai.chat', count: 1, kind: 'status', status: 500 });
    const ant = new Anthropic({ apiKey: rig.key, baseURL: rig.gw.url, maxRetries: 0 });
    await expect(ant.messages.create({ model: 'solo', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({ status: 502 });
  });
});

describe('circuit breaker', () => {
  let rig: ChatRig;
  beforeAll(async () => {
    rig = await startChatRig({
      models: MODELS,
      relay: { breaker_failures: 2, breaker_cooldown_ms: 60_000 },
      channels: (sim) => [
        { name: 'flaky', type: 'anthropic', base_url: sim, api_key: 'k1', priority: 0, models: ['dual'] },
        { name: 'steady', type: 'openai', base_url: `${sim}/v1`, api_key: 'k2', priority: 1, models: ['dual'] },
      ],
    });
  });
  afterAll(async () => rig.close());

  it('skips a channel after consecutive failures while it cools down', async () => {
    await rig.fault({ match: 'anthropic.messages', count: 10, kind: 'status', status: 500 });
    for (let i = 0; i < 5; i++) {
      const res = await post(rig, '/v1/chat/completions', { model: 'dual', messages: [{ role: 'user', content: `try ${i}` }] });
      expect(res.status).toBe(200);
    }
    const counts = (await rig.stats()).counts;
    // Two failures opened the breaker: the three later requests went straight to "steady".
    expect(counts['anthropic.messages']).toBe(2);
    expect(counts['openai.chat']).toBe(5);
  });
});
