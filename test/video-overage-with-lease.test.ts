import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, usageRowsOf, type TestGateway } from './helpers/gateway.js';
import { createTask, eventually, isFinished, waitForTask } from './helpers/video.js';

// Through the gateway: a chat request draws the key's remaining balance into this instance's
// credit lease, then a video task settles above its hold (its model's price went up while it
// ran). The stored balance is 0 at the settle, but the key's money is in the lease: the lease
// pays first, so the key owes only what neither the hold nor its money covered, holds nothing
// beside that debt, and the task's ledger row says the same.

describe('a video settle beyond its hold while the key’s money is leased', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    // Videos take 3 s: the chat request and the price change come before the task finishes.
    gw = await startGateway({ simulator: { embedded: true, video_seconds: 3 } });
  });
  afterAll(async () => gw?.close());

  const stored = async (keyId: string) => {
    const key = await gw.services.store.db.selectFrom('api_keys').select(['credit_micros', 'overage_micros']).where('id', '=', keyId).executeTakeFirstOrThrow();
    const leases = await gw.services.store.db.selectFrom('credit_leases').select('amount_micros').where('key_id', '=', keyId).execute();
    return { balance: Number(key.credit_micros), owed: Number(key.overage_micros), leased: leases.reduce((a, r) => a + Number(r.amount_micros), 0) };
  };

  it('owes the real shortfall only, with no balance and no lease beside it', async () => {
    const start = 350_000;
    const { id, key } = await gw.createKey({ creditMicros: start });
    const created = await createTask(gw.url, key, { model: 'sim-video', prompt: 'a corgi runs on grass' });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const held = await gw.services.store.db.selectFrom('reservations').select('amount_micros').where('key_id', '=', id).executeTakeFirstOrThrow();
    const hold = Number(held.amount_micros);
    // What is left is less than a lease draw for one chat request (20 × its hold of about 6,100).
    expect(start - hold).toBeLessThan(120_000);

    const chat = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: 'hello' }] }),
    });
    expect(chat.status, await chat.clone().text()).toBe(200);
    await gw.services.credit.flush();
    const before = await stored(id);
    // The lease took everything the video hold left: the stored balance reads 0.
    expect(before.balance).toBe(0);
    expect(before.leased).toBeGreaterThan(0);

    // Four times the price at the settle: the task costs more than its hold (held at the default
    // resolution, settled at the one rendered).
    gw.config.models['sim-video'] = { ...gw.config.models['sim-video'], price: { per_million_tokens: 4 } };
    await waitForTask(gw.url, key, created.body.data.task_id, isFinished);
    await eventually(async () => (await usageRowsOf(gw.services, id)).some((r) => r.endpoint === 'video.settle'), 10_000, 'the settle row');
    const rows = await usageRowsOf(gw.services, id);
    const settle = rows.find((r) => r.endpoint === 'video.settle')!;
    const chatCost = rows.filter((r) => r.endpoint === 'chat').reduce((a, r) => a + Number(r.cost_micros), 0);
    const cost = Number(settle.cost_micros);
    expect(cost).toBeGreaterThan(hold);

    await gw.services.credit.flush();
    const after = await stored(id);
    const shortfall = cost + chatCost - start;
    expect(shortfall).toBeGreaterThan(0);
    expect(after).toEqual({ balance: 0, owed: shortfall, leased: 0 });
    expect(Number(settle.overage_micros)).toBe(shortfall);
  });
});
