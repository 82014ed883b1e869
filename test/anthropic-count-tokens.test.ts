import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Anthropic from '@anthropic-ai/sdk';
import { startChatRig, ledgerRows, type ChatRig } from './helpers/chat.js';
import { estimateChatTokens } from '../src/routes/chat-handler.js';
import { photo } from './helpers/png.js';

// POST /v1/messages/count_tokens through the Anthropic SDK's messages.countTokens: exact where the
// channel counts itself (an Anthropic channel, the simulator's Anthropic side), else the bound the
// credit hold of the same message would reserve; free, rate-limited, errors in Anthropic's shape.

const WEATHER_TOOL: Anthropic.Tool = { name: 'get_weather', description: 'Weather of a city', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };
const PICTURE = photo(96, 96).toString('base64');
const REQUEST = { system: 'Be brief.', messages: [{ role: 'user' as const, content: 'How warm is it in Lisbon today?' }], tools: [WEATHER_TOOL] };

async function post(rig: ChatRig, body: unknown, key = rig.key) {
  const text = JSON.stringify(body);
  const res = await fetch(`${rig.gw.url}/v1/messages/count_tokens`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: text });
  return { status: res.status, body: (await res.json()) as any, bytes: Buffer.byteLength(text) };
}

describe('Anthropic token counting', () => {
  let rig: ChatRig;
  let client: Anthropic;
  beforeAll(async () => {
    rig = await startChatRig();
    client = new Anthropic({ apiKey: rig.key, baseURL: rig.gw.url, maxRetries: 0 });
  });
  afterAll(async () => rig.close());

  it.each(['claude-sim', 'sim-chat'])('%s: counts at the upstream, exactly what the message then reports as its input', async (model) => {
    const before = (await rig.stats()).counts['anthropic.count_tokens'] ?? 0;
    const counted = await client.messages.countTokens({ model, ...REQUEST });
    expect((await rig.stats()).counts['anthropic.count_tokens']).toBe(before + 1);
    const sent = await client.messages.create({ model, max_tokens: 50, ...REQUEST });
    expect(counted.input_tokens).toBeGreaterThan(0);
    expect(counted.input_tokens).toBe(sent.usage.input_tokens);
  });

  it('gpt-sim (an OpenAI channel, which cannot count): the input bound the credit hold uses, no upstream call', async () => {
    const before = await rig.stats();
    const body = { model: 'gpt-sim', messages: [{ role: 'user', content: [{ type: 'text', text: 'What is on this picture?' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PICTURE } }] }] };
    const r = await post(rig, body);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ input_tokens: estimateChatTokens('anthropic', body, r.bytes).input });
    // The image counts at its per-image cost (1,600 by default), not its base64 bytes.
    expect(PICTURE.length).toBeGreaterThan(4000);
    expect(r.body.input_tokens).toBeLessThan(r.bytes - PICTURE.length + 1700);
    expect(r.body.input_tokens).toBeGreaterThan(1600);
    const after = await rig.stats();
    expect(after.counts['openai.chat'] ?? 0).toBe(before.counts['openai.chat'] ?? 0);
    // Through the SDK too.
    const sdk = await client.messages.countTokens({ model: 'gpt-sim', ...REQUEST });
    expect(sdk.input_tokens).toBeGreaterThanOrEqual(JSON.stringify(REQUEST).length);
  });

  it('is free: one zero-cost ledger row per count, and a key without credit left still counts', async () => {
    const broke = await rig.gw.createKey({ creditMicros: 0 });
    const c = new Anthropic({ apiKey: broke.key, baseURL: rig.gw.url, maxRetries: 0 });
    await expect(c.messages.create({ model: 'claude-sim', max_tokens: 50, ...REQUEST })).rejects.toMatchObject({ status: 403 });
    const counted = await c.messages.countTokens({ model: 'claude-sim', ...REQUEST });
    expect(counted.input_tokens).toBeGreaterThan(0);
    const rows = (await ledgerRows(rig, broke.id)).filter((r) => r.endpoint === 'count_tokens');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ model: 'claude-sim', channel: 'anth', status: 200, input_units: counted.input_tokens, output_units: 0 });
    expect(Number(rows[0].cost_micros)).toBe(0);
    const account = await rig.gw.services.credit.account(broke.id);
    expect(account?.balanceMicros).toBe(0);
  });

  it('answers bad requests in Anthropic’s error shape, each with its ledger row', async () => {
    const fresh = await rig.gw.createKey();
    const c = new Anthropic({ apiKey: fresh.key, baseURL: rig.gw.url, maxRetries: 0 });
    const noMessages = await post(rig, { model: 'claude-sim' }, fresh.key);
    expect(noMessages.status).toBe(400);
    expect(noMessages.body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    expect(noMessages.body.error.message).toMatch(/messages/);
    const unknown = await post(rig, { model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] }, fresh.key);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
    const image = await post(rig, { model: 'sim-image', messages: [{ role: 'user', content: 'hi' }] }, fresh.key);
    expect(image.status).toBe(400);
    expect(image.body.error.message).toContain('not a chat model');
    await expect(c.messages.countTokens({ model: 'claude-sim', messages: [{ role: 'robot' as never, content: 'hi' }] })).rejects.toMatchObject({ status: 400 });
    const noKey = await fetch(`${rig.gw.url}/v1/messages/count_tokens`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'claude-sim', messages: [] }) });
    expect(noKey.status).toBe(401);
    expect(((await noKey.json()) as any).error.type).toBe('authentication_error');
    const rows = (await ledgerRows(rig, fresh.id)).filter((r) => r.endpoint === 'count_tokens');
    expect(rows.map((r) => r.status).sort()).toEqual([400, 400, 400, 404]);
  });

  it('counts against the key’s rate limit like any call', async () => {
    const limited = await rig.gw.createKey({ rpm: 1 });
    const c = new Anthropic({ apiKey: limited.key, baseURL: rig.gw.url, maxRetries: 0 });
    await c.messages.countTokens({ model: 'claude-sim', ...REQUEST });
    const second = await post(rig, { model: 'claude-sim', ...REQUEST }, limited.key);
    expect(second.status).toBe(429);
    expect(second.body).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
  });

  it('passes an upstream refusal on in Anthropic’s shape', async () => {
    await rig.fault({ route: 'anthropic.count_tokens', kind: 'status', status: 400, count: 1 });
    const r = await post(rig, { model: 'claude-sim', ...REQUEST });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
  });
});
