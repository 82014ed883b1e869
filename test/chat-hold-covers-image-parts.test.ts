import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from './helpers/gateway.js';
import { startFakeProvider } from './helpers/fake-provider.js';

// A body of many short image parts (and of short symbols) costs far more tokens than its bytes / 4.
// Holds sized that way let parallel requests spend several times a key's balance, and a settle
// above the hold was taken only down to zero, so the ledger billed less than the upstream reported.
// Now the hold is a bound that cannot underestimate, the ledger bills the reported usage in full,
// and a cost beyond hold and balance is owed (the key refused until topped up).

describe('a chat hold covers what the upstream reports', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(async () => {
    await gw.close();
  });

  const imageParts = (n: number) => Array.from({ length: n }, (_, i) => ({ type: 'image_url', image_url: { url: `https://e.x/${i}.png` } }));

  const bodyOf = (content: unknown, extra: Record<string, unknown>) => JSON.stringify({ model: 'sim-chat', max_tokens: 5, messages: [{ role: 'user', content }], ...extra });

  async function chat(key: string, content: unknown, extra: Record<string, unknown> = {}, on: TestGateway = gw) {
    const res = await fetch(`${on.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: bodyOf(content, extra),
    });
    return { status: res.status, body: (await res.json()) as any };
  }

  // sim-chat: $0.5 input and $1.5 output per million tokens, so micro-dollars = 0.5 × in + 1.5 × out;
  // sim-claude: $3 and $15.
  const costOf = (u: { prompt_tokens: number; completion_tokens: number }, price = [0.5, 1.5]) => Math.ceil(u.prompt_tokens * price[0] + u.completion_tokens * price[1]);

  async function ledgerRows(keyId: string, on: TestGateway = gw) {
    await on.services.ledger.flush();
    return on.services.store.db.selectFrom('usage').select(['status', 'input_units', 'cost_micros', 'overage_micros']).where('key_id', '=', keyId).execute();
  }

  it('never lets parallel requests of many image parts spend more than the balance, and bills each its reported usage', async () => {
    const parts = [{ type: 'text', text: 'look' }, ...imageParts(40)];
    // What one such request really costs, measured on an unlimited key.
    const { key: free } = await gw.createKey();
    const probe = await chat(free, parts);
    expect(probe.status).toBe(200);
    const realCost = costOf(probe.body.usage);
    expect(probe.body.usage.prompt_tokens).toBeGreaterThan(40 * 80);

    const start = realCost * 10;
    const { id, key } = await gw.createKey({ creditMicros: start });
    const answers = await Promise.all(Array.from({ length: 40 }, () => chat(key, parts)));
    const ok = answers.filter((a) => a.status === 200);
    expect(ok.length).toBeGreaterThan(0);
    for (const a of answers.filter((x) => x.status !== 200)) expect(a.body.error.code).toBe('insufficient_quota');

    const rows = (await ledgerRows(id)).filter((r) => r.status === 200);
    expect(rows).toHaveLength(ok.length);
    const billed = rows.reduce((n, r) => n + Number(r.cost_micros), 0);
    // Every answered request billed in full what the upstream reported…
    expect(billed).toBe(ok.reduce((n, a) => n + costOf(a.body.usage), 0));
    // …and together they stayed within the balance: nothing owed, and the balance moved by the bill.
    expect(billed).toBeLessThanOrEqual(start);
    expect(rows.every((r) => Number(r.overage_micros) === 0)).toBe(true);
    expect(await gw.services.credit.spendable(id)).toBe(start - billed);
    expect((await gw.services.credit.account(id))?.overageMicros).toBe(0);
  });

  it('holds at least the reported input for text of short symbols', async () => {
    const { id, key } = await gw.createKey({ creditMicros: 1_000_000 });
    const text = '! '.repeat(3000);
    const before = await gw.services.credit.spendable(id);
    const answer = await chat(key, text);
    expect(answer.status).toBe(200);
    const rows = await ledgerRows(id);
    expect(rows).toHaveLength(1);
    expect(Number(rows[0].input_units)).toBe(answer.body.usage.prompt_tokens);
    expect(Number(rows[0].overage_micros)).toBe(0);
    expect(before! - (await gw.services.credit.spendable(id))!).toBe(costOf(answer.body.usage));
  });

  it('owes a cost beyond hold and balance: billed in full, refused with a clear 403 until a top-up pays it', async () => {
    // A provider that answers 8,000 output tokens whatever it was asked for: more than the 4,096 a
    // request without max_tokens is held for (the simulator never writes more than that), at
    // sim-claude's prices (output 5× input).
    const fake = await startFakeProvider({
      chat: (body) => ({
        status: 200,
        json: { id: 'c', object: 'chat.completion', created: 1, model: body.model, choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'a '.repeat(8000) } }], usage: { prompt_tokens: 8000, completion_tokens: 8000, total_tokens: 16000 } },
      }),
    });
    const over = await startGateway({
      simulator: { embedded: false },
      channels: [{ name: 'oai-fake', type: 'openai', base_url: `${fake.url}/v1`, api_key: 'oai-key-123456', models: ['over-claude'] }],
      models: { 'over-claude': { kind: 'chat', owned_by: 'openai', price: { input_per_million: 3, output_per_million: 15 } } },
    });
    try {
      const words = 'a '.repeat(8000);
      const claude = { model: 'over-claude', max_tokens: undefined };
      const realCost = costOf({ prompt_tokens: 8000, completion_tokens: 8000 }, [3, 15]);
      // Exactly the hold: the body's bytes as input tokens and 4,096 output tokens.
      const hold = Math.ceil(Buffer.byteLength(bodyOf(words, claude)) * 3 + 4096 * 15);
      expect(realCost).toBeGreaterThan(hold);
      const { id, key } = await over.createKey({ creditMicros: hold });
      const answer = await chat(key, words, claude, over);
      expect(answer.status).toBe(200);
      const rows = await ledgerRows(id, over);
      expect(rows).toHaveLength(1);
      expect(Number(rows[0].cost_micros)).toBe(realCost);
      expect(Number(rows[0].overage_micros)).toBe(realCost - hold);
      expect(await over.services.credit.account(id)).toEqual({ balanceMicros: 0, leasedMicros: 0, overageMicros: realCost - hold });
      const totals = await over.services.usage.totals({ keyId: id });
      expect(totals[0].overage_micros).toBe(realCost - hold);

      const refused = await chat(key, 'hi', claude, over);
      expect(refused.status).toBe(403);
      expect(refused.body.error.code).toBe('insufficient_quota');
      expect(refused.body.error.message).toMatch(/owes \$0\.\d+.*refused until the operator tops it up/);
      await over.services.reservations.topUp(id, realCost - hold + 100_000);
      expect((await chat(key, 'hi', claude, over)).status).toBe(200);
    } finally {
      await over.close();
      await fake.close();
    }
  });
});
