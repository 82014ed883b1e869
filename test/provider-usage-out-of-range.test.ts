import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, usageRowsOf, type TestGateway } from './helpers/gateway.js';
import { startFakeProvider, type FakeProvider } from './helpers/fake-provider.js';
import { createTask, eventually, isFinished, waitForTask } from './helpers/video.js';

// Usage numbers a provider should never send — 1e30, negative, a string, "NaN" — on a video task
// and on a chat answer. Each request still gets exactly one ledger row (PostgreSQL's bigint used to
// refuse 1e30 and lose it), billed at the estimate the request was admitted with, not at a fortune.

const BAD: Record<string, unknown> = { huge: 1e30, negative: -5, text: '123', nan: 'NaN', overflow: 9.3e18 };

describe('out-of-range usage numbers from providers', () => {
  let fake: FakeProvider;
  let gw: TestGateway;
  let key: string;
  let keyId: string;
  const CREDIT = 100_000_000;

  beforeAll(async () => {
    fake = await startFakeProvider({
      videoTask: (prompt) => ({ status: 'succeeded', content: { video_url: 'https://cdn.example.com/v.mp4' }, usage: { total_tokens: BAD[prompt], completion_tokens: BAD[prompt] } }),
      chat: (body) => ({
        status: 200,
        json: {
          id: 'c',
          object: 'chat.completion',
          created: 1,
          model: body.model,
          choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'ok' } }],
          usage: { prompt_tokens: BAD[body.messages[0].content], completion_tokens: BAD[body.messages[0].content], total_tokens: 1e30 },
        },
      }),
    });
    gw = await startGateway({
      simulator: { embedded: false },
      channels: [
        { name: 'ark-fake', type: 'ark', base_url: fake.url, api_key: 'ark-key-123456', models: ['fake-video'] },
        { name: 'oai-fake', type: 'openai', base_url: `${fake.url}/v1`, api_key: 'oai-key-123456', models: ['fake-chat'] },
      ],
      models: {
        'fake-video': { kind: 'video', owned_by: 'volcengine', modes: ['text'], price: { per_million_tokens: 1 } },
        'fake-chat': { kind: 'chat', owned_by: 'openai', price: { input_per_million: 1, output_per_million: 2 } },
      },
    });
    ({ key, id: keyId } = await gw.createKey({ creditMicros: CREDIT }));
  });

  afterAll(async () => {
    await gw?.close();
    await fake?.close();
  });

  it.each(Object.keys(BAD))('settles a video task reporting %s tokens at its estimate, with a ledger row', async (prompt) => {
    const created = await createTask(gw.url, key, { model: 'fake-video', prompt });
    const t = await waitForTask(gw.url, key, created.body.data.task_id, isFinished);
    expect(t.status).toBe('SUCCESS');
    // The status is visible a moment before the settle: wait for the hold to be gone.
    await eventually(async () => (await gw.services.credit.heldCount(keyId)) === 0, 10_000, 'the settle');
    const task = await gw.services.store.db.selectFrom('tasks').select(['estimated_units']).where('task_id', '=', t.task_id).executeTakeFirstOrThrow();
    const rows = (await usageRowsOf(gw.services, keyId)).filter((r) => r.endpoint === 'video.settle');
    const row = rows.at(-1)!;
    expect(Number(row.status)).toBe(200);
    expect(Number(row.output_units)).toBe(Number(task.estimated_units));
    expect(Number(row.cost_micros)).toBe(Math.ceil(Number(task.estimated_units)));
  });

  it.each(Object.keys(BAD))('bills a chat answer reporting %s tokens at the estimate, with a ledger row', async (content) => {
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'fake-chat', max_tokens: 16, messages: [{ role: 'user', content }] }),
    });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    const row = (await usageRowsOf(gw.services, keyId)).filter((r) => r.endpoint === 'chat').at(-1)!;
    expect(Number(row.status)).toBe(200);
    expect(Number(row.output_units)).toBe(16);
    expect(Number(row.input_units)).toBeGreaterThan(0);
    expect(Number(row.input_units)).toBeLessThan(1000);
  });

  it('never took more than the estimates from the balance', async () => {
    const rows = await usageRowsOf(gw.services, keyId);
    // Per scenario: a video create row, its settle row, a chat row.
    expect(rows).toHaveLength(Object.keys(BAD).length * 3);
    const charged = rows.reduce((s, r) => s + Number(r.cost_micros), 0);
    expect(await gw.services.credit.spendable(keyId)).toBe(CREDIT - charged);
    // Five video estimates (~0.25 USD each) and five small chats; a believed 1e30 would have taken it all.
    expect(charged).toBeLessThan(2_000_000);
  });
});
