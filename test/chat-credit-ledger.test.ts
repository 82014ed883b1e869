import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerRows, ledgerRowsWhen, post, startChatRig, type ChatRig } from './helpers/chat.js';

// Chat requests and money: the estimate is held before the upstream call, the reported usage is
// charged after it, a failure returns the hold; one ledger row per request.
// Prices (test models): gpt-sim 1 / 2, claude-sim 3 / 15 USD per million tokens, so one token
// costs 1, 2, 3 or 15 micro-dollars.

describe('chat credit and ledger', () => {
  let rig: ChatRig;
  beforeAll(async () => {
    rig = await startChatRig({ relay: { breaker_failures: 1000 } });
  });
  afterAll(async () => rig.close());

  it('charges the reported usage of a non-streamed answer and writes one ledger row', async () => {
    const { id, key } = await rig.gw.createKey({ creditMicros: 1_000_000 });
    const res = await post(rig, '/v1/chat/completions', { model: 'gpt-sim', messages: [{ role: 'user', content: 'Hello there' }] }, key);
    expect(res.status).toBe(200);
    // 2 input tokens × 1 + 5 output tokens × 2 = 12 micro-dollars.
    expect(await rig.gw.services.credit.spendable(id)).toBe(1_000_000 - 12);
    const rows = await ledgerRows(rig, id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ model: 'gpt-sim', channel: 'oai', endpoint: 'chat', status: 200, input_units: 2, output_units: 5, cost_micros: 12 });
    expect(rows[0].latency_ms).toBeGreaterThanOrEqual(0);
  });

  it('charges a converted streamed answer from the usage the upstream reported', async () => {
    const { id, key } = await rig.gw.createKey({ creditMicros: 1_000_000 });
    // An Anthropic client of an OpenAI channel: the usage comes from the usage chunk the gateway asked for.
    const res = await post(rig, '/v1/messages', { model: 'gpt-sim', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'Hello there' }] }, key);
    expect(res.status).toBe(200);
    await res.text();
    const rows = await ledgerRowsWhen(rig, 1, id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ model: 'gpt-sim', channel: 'oai', endpoint: 'messages', status: 200, input_units: 2, output_units: 5, cost_micros: 12 });
    expect(await rig.gw.services.credit.spendable(id)).toBe(1_000_000 - 12);
  });

  it('charges an OpenAI stream of an Anthropic channel from message_start and message_delta', async () => {
    const { id, key } = await rig.gw.createKey({ creditMicros: 1_000_000 });
    const res = await post(rig, '/v1/chat/completions', { model: 'claude-sim', stream: true, messages: [{ role: 'user', content: 'Hello there' }] }, key);
    await res.text();
    const rows = await ledgerRowsWhen(rig, 1, id);
    // 2 × 3 + 5 × 15 = 81.
    expect(rows[0]).toMatchObject({ channel: 'anth', endpoint: 'chat', status: 200, input_units: 2, output_units: 5, cost_micros: 81 });
    expect(await rig.gw.services.credit.spendable(id)).toBe(1_000_000 - 81);
  });

  it('returns the whole hold when the upstream fails', async () => {
    const { id, key } = await rig.gw.createKey({ creditMicros: 500_000 });
    await rig.fault({ match: 'openai.chat', kind: 'status', status: 500, count: 1 });
    const res = await post(rig, '/v1/chat/completions', { model: 'gpt-sim', messages: [{ role: 'user', content: 'x' }] }, key);
    expect(res.status).toBe(502);
    expect(await rig.gw.services.credit.spendable(id)).toBe(500_000);
    const rows = await ledgerRows(rig, id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: 502, channel: 'oai', cost_micros: 0, input_units: 0, output_units: 0 });
  });

  it('refuses with 403 insufficient_quota, in each family, when the estimate cannot be held', async () => {
    // max_tokens 4096 × 15 micro-dollars alone is more than this balance.
    const { id, key } = await rig.gw.createKey({ creditMicros: 1000 });
    const oai = await post(rig, '/v1/chat/completions', { model: 'claude-sim', messages: [{ role: 'user', content: 'x' }] }, key);
    expect(oai.status).toBe(403);
    expect(((await oai.json()) as any).error).toMatchObject({ code: 'insufficient_quota', type: 'insufficient_quota' });
    const ant = await post(rig, '/v1/messages', { model: 'claude-sim', max_tokens: 4096, messages: [{ role: 'user', content: 'x' }] }, key);
    expect(ant.status).toBe(403);
    expect(await ant.json()).toMatchObject({ type: 'error', error: { type: 'permission_error' } });
    // A small max_tokens fits the same balance.
    const small = await post(rig, '/v1/messages', { model: 'claude-sim', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }, key);
    expect(small.status).toBe(200);
    expect(await rig.gw.services.credit.spendable(id)).toBeLessThan(1000);
    expect(await rig.gw.services.credit.spendable(id)).toBeGreaterThanOrEqual(0);
  });
});
