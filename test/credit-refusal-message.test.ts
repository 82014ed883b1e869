import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from './helpers/gateway.js';

// A key whose balance is positive but below a request's hold is told what the request needed, what
// is left, and the largest max_tokens that fits, instead of "exhausted".

describe('the 403 of a balance below the hold', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(async () => {
    await gw.close();
  });

  async function chat(path: string, key: string, body: Record<string, unknown>) {
    const res = await fetch(`${gw.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }], ...body }),
    });
    const json = (await res.json()) as any;
    return { status: res.status, code: json.error?.code ?? json.error?.type, message: String(json.error?.message) };
  }

  it('says what was needed, what is left and which max_tokens fits (OpenAI format, default cap)', async () => {
    // sim-chat: $0.5 / $1.5 per million tokens; the default hold of 4096 output tokens is $0.006144 and more.
    const { key } = await gw.createKey({ creditMicros: 5_000 });
    const refused = await chat('/v1/chat/completions', key, {});
    expect(refused.status).toBe(403);
    expect(refused.code).toBe('insufficient_quota');
    expect(refused.message).toMatch(/needs \$0\.0061\d* of credit/);
    expect(refused.message).toContain('has $0.005 left');
    expect(refused.message).not.toContain('exhausted');
    expect(refused.message).toContain('4096 output tokens');
    const fits = Number(/max_tokens of at most (\d+) fits/.exec(refused.message)?.[1]);
    expect(fits).toBeGreaterThan(3000);
    expect(fits).toBeLessThan(3334);
    expect((await chat('/v1/chat/completions', key, { max_tokens: fits })).status).toBe(200);
  });

  it('names the field the client used and says exhausted only at zero', async () => {
    const { key } = await gw.createKey({ creditMicros: 1_000 });
    const refused = await chat('/v1/chat/completions', key, { max_completion_tokens: 4000 });
    expect(refused.status).toBe(403);
    expect(refused.message).toMatch(/max_completion_tokens of at most \d+ fits\./);
    const anthropic = await chat('/v1/messages', key, { max_tokens: 4000 });
    expect(anthropic.status).toBe(403);
    expect(anthropic.message).toMatch(/has \$0\.001 left\. A request with max_tokens of at most \d+ fits\./);
    const { key: empty } = await gw.createKey({ creditMicros: 0 });
    expect((await chat('/v1/chat/completions', empty, {})).message).toContain('exhausted');
  });
});
