import { expect } from 'vitest';
import type { ModelConfig } from '../../src/config/schema.js';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';
import { sampleVideo } from '../../src/simulator/mp4.js';
import { providerFor } from '../../src/providers/index.js';
import { targetFor } from '../../src/upstream/target.js';
import { startGateway, type TestGateway } from './gateway.js';
import { createTask, waitForTask } from './video.js';

// End-to-end helpers for one video provider: a gateway whose only channel is of that provider's
// type, pointed at a simulator of its own (so the adapter's real HTTP path runs), and the checks
// every provider's scenario shares.

export interface ProviderRig {
  gw: TestGateway;
  sim: Simulator;
  close(): Promise<void>;
}

/**
 * `gateway`: further settings of the gateway (storage, webhooks, server…). `opts.sim`: a simulator
 * already running (another rig's; left running on close); `opts.noPoller`: the test polls itself.
 */
export async function providerRig(
  type: string,
  models: Record<string, ModelConfig>,
  channel: Record<string, unknown> | ((simUrl: string) => Record<string, unknown>) = {},
  gateway: Record<string, unknown> = {},
  opts: { sim?: Simulator; noPoller?: boolean } = {},
): Promise<ProviderRig> {
  const sim = opts.sim ?? (await startSimulator({ videoSeconds: 0.3, urlTtlS: 3600 }));
  if (typeof channel === 'function') channel = channel(sim.url);
  const gw = await startGateway(
    {
      ...gateway,
      simulator: { embedded: false },
      // The simulator listens on loopback, which the image and video fetchers refuse unless the channel allows it.
      channels: [{ name: type, type, base_url: sim.url, api_key: `${type}-test-key`, allow_private_network: true, models: Object.keys(models), ...channel }],
      models,
    },
    { noPoller: opts.noPoller },
  );
  return { gw, sim, close: async () => (await gw.close(), opts.sim ? undefined : await sim.close()) };
}

/** The key's stored balance, micro-dollars. */
export async function balanceOf(gw: TestGateway, keyId: string): Promise<number> {
  const row = await gw.services.store.db.selectFrom('api_keys').select('credit_micros').where('id', '=', keyId).executeTakeFirstOrThrow();
  return Number(row.credit_micros);
}

/** Creates a task, waits for SUCCESS and returns the record. */
export async function createAndFinish(gw: TestGateway, key: string, body: Record<string, unknown>): Promise<any> {
  const created = await createTask(gw.url, key, body);
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return waitForTask(gw.url, key, created.body.data.task_id, (r) => r.status === 'SUCCESS' || r.status === 'FAILURE');
}

/** Whole (200) and a Range (206) of a body source, both the simulator's MP4. */
async function expectWholeAndRange(get: (range?: string) => Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }>): Promise<void> {
  const whole = await get();
  expect(whole.status).toBe(200);
  expect(String(whole.headers['content-type'])).toBe('video/mp4');
  expect(whole.body.equals(sampleVideo())).toBe(true);
  const part = await get('bytes=100-199');
  expect(part.status).toBe(206);
  expect(String(part.headers['content-range'])).toBe(`bytes 100-199/${sampleVideo().length}`);
  expect(part.body.equals(sampleVideo().subarray(100, 200))).toBe(true);
}

/** The result URL a client got (a provider link anyone may fetch) serves the video, Range included. */
export async function expectUrlServes(url: string): Promise<void> {
  await expectWholeAndRange(async (range) => {
    const res = await fetch(url, { headers: range ? { range } : {} });
    return { status: res.status, headers: Object.fromEntries(res.headers), body: Buffer.from(await res.arrayBuffer()) };
  });
}

/**
 * A result only the channel's key can fetch: the provider adapter's download, as the gateway's
 * /content calls it, with the channel of the rig, streams the video, Range included.
 */
export async function expectAdapterDownloads(rig: ProviderRig, record: any, model: string): Promise<void> {
  const channel = rig.gw.config.channels[0];
  const adapter = providerFor(channel.type)!.videos!;
  await expectWholeAndRange(async (range) => {
    const res = await adapter.download!({ upstream: rig.gw.services.upstream }, targetFor(channel, model), record.data, range);
    return { status: res.statusCode, headers: res.headers, body: Buffer.from(await res.body.arrayBuffer()) };
  });
}

/** A 400 in the video envelope whose message names every allowed value. */
export async function expectRefused(gw: TestGateway, key: string, body: Record<string, unknown>, names: string[]): Promise<void> {
  const res = await createTask(gw.url, key, body);
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body.data).toBeNull();
  for (const n of names) expect(res.body.message).toContain(n);
}
