import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, usageRowsOf, type TestGateway } from './helpers/gateway.js';
import { freshDatabaseUrl, testDialect } from './helpers/databases.js';
import { eventually } from './helpers/eventually.js';
import { startSimulator, type Simulator } from '../src/simulator/server.js';

// A queued image request whose client got a 504 is settled by the store, not by the process that
// answered: the gateway stops before the provider finishes, a new one on the same store follows
// the tasks to their end and writes exactly one usage row — charged for what they made, or with
// the credit returned when they failed. On PostgreSQL two instances follow the same store at once
// and still settle each request once.

const CREDIT = 1_000_000;
const PRICE = 40_000;

describe('image waits survive a restart', () => {
  let sim: Simulator;
  let db: Awaited<ReturnType<typeof freshDatabaseUrl>>;
  const open: TestGateway[] = [];

  // A task runs 4 s at the simulator; the model's clients wait 100 ms.
  const gateway = async () => {
    const gw = await startGateway({
      database: { url: db.url },
      simulator: { embedded: false },
      channels: [{ name: 'bfl', type: 'bfl', base_url: `${sim.url}/bfl`, api_key: 'bfl-restart-secret', models: ['flux-wait'], model_map: { 'flux-wait': 'flux-pro-1.1' } }],
      models: { 'flux-wait': { kind: 'image', price: { per_image: PRICE / 1e6 }, wait: { interval_ms: 50, timeout_s: 0.1 } } },
    });
    open.push(gw);
    return gw;
  };
  const post = (gw: TestGateway, key: string, prompt: string, n = 1) =>
    fetch(`${gw.url}/v1/images/generations`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'flux-wait', prompt, n, size: '256x256' }) });
  const rows = async (gws: TestGateway[], keyId: string) => (await Promise.all(gws.map((g) => usageRowsOf(g.services, keyId))))[0];

  beforeAll(async () => {
    sim = await startSimulator({ videoSeconds: 20 });
    db = await freshDatabaseUrl();
  });
  afterAll(async () => {
    for (const gw of open) await gw.close().catch(() => undefined);
    await sim?.close();
    await db?.drop();
  });

  it.each([
    { prompt: 'a lighthouse', images: 2, cost: 2 * PRICE },
    { prompt: 'a lighthouse [fail]', images: 0, cost: 0 },
  ])('settles "$prompt" after the gateway that answered 504 stopped: one row, $images images, $cost charged', async ({ prompt, images, cost }) => {
    const first = await gateway();
    const { id, key } = await first.createKey({ creditMicros: CREDIT });
    const r = await post(first, key, prompt, 2);
    expect(r.status).toBe(504);
    expect(((await r.json()) as { error: { code: string } }).error.code).toBe('upstream_timeout');
    expect(await first.services.credit.heldCount(id)).toBe(1);
    await first.close();
    open.splice(open.indexOf(first), 1);

    const second = await gateway();
    // Held in the store across the restart, nothing written yet: the provider is still working.
    expect(await second.services.credit.heldCount(id)).toBe(1);
    expect(await usageRowsOf(second.services, id)).toEqual([]);
    await eventually(async () => (await usageRowsOf(second.services, id)).length > 0, 20_000, 'the usage row');
    const [row] = await usageRowsOf(second.services, id);
    expect(row).toMatchObject({ model: 'flux-wait', channel: 'bfl', endpoint: 'images.generations', status: 504, output_units: images, cost_micros: cost });
    // The row keeps what its client was told, and what the images were billed by.
    expect(row.error).toMatch(/not ready in time.*left to finish/);
    expect(row.billed_by).toBe(images ? '2 images × $0.04' : '');
    expect(await second.services.credit.heldCount(id)).toBe(0);
    expect(await second.services.credit.spendable(id)).toBe(CREDIT - cost);
    expect(await second.services.store.db.selectFrom('image_waits').selectAll().execute()).toEqual([]);
    await second.close();
    open.splice(open.indexOf(second), 1);
  });

  it.runIf(testDialect() === 'postgres')('settles each wait once with two instances on one store', async () => {
    const [a, b] = [await gateway(), await gateway()];
    const { id, key } = await a.createKey({ creditMicros: CREDIT });
    const answers = await Promise.all([post(a, key, 'one'), post(b, key, 'two'), post(a, key, 'three')]);
    expect(answers.map((r) => r.status)).toEqual([504, 504, 504]);
    await eventually(async () => (await rows([a, b], id)).length >= 3, 20_000, 'three usage rows');
    // Give a second settle the time to show up, if there were one.
    await new Promise((r) => setTimeout(r, 500));
    const all = [...(await usageRowsOf(a.services, id))];
    expect(all).toHaveLength(3);
    expect(all.every((row) => row.cost_micros === PRICE && row.output_units === 1)).toBe(true);
    expect(await a.services.credit.spendable(id)).toBe(CREDIT - 3 * PRICE);
    expect(await a.services.credit.heldCount(id)).toBe(0);
  });
});
