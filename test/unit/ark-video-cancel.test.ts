import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';
import { UpstreamClient } from '../../src/upstream/client.js';
import { targetFor } from '../../src/upstream/target.js';
import { arkVideos } from '../../src/providers/ark/videos.js';
import { eventually } from '../helpers/eventually.js';

// The Ark adapter cancels a queued task (Ark: DELETE on the task) and reports a refusal for a
// running one, against the simulator's Ark part over HTTP.

describe('Ark video adapter: cancel', () => {
  let sim: Simulator;
  const upstream = new UpstreamClient({ connectMs: 2000, firstByteMs: 5000, idleMs: 5000 });
  const call = { upstream };
  let target: ReturnType<typeof targetFor>;
  const req = { prompt: 'a cat', mode: 'text' as const, images: [], params: {}, metadata: {} };

  beforeAll(async () => {
    sim = await startSimulator({ videoSeconds: 2 });
    target = targetFor({ name: 'ark', type: 'ark', base_url: sim.url, api_key: 'k-simulated', priority: 0, weight: 1, enabled: true, models: ['m'], model_map: {}, poll_concurrency: 1 }, 'doubao-seedance-1-0-pro-250528');
  });
  afterAll(async () => {
    await upstream.close();
    await sim.close();
  });

  it('a queued task is cancelled and then reads as cancelled', async () => {
    const { upstreamId } = await arkVideos.create(call, target, req);
    expect(await arkVideos.cancel!(call, target, upstreamId)).toEqual({ accepted: true, message: '' });
    const view = arkVideos.view(await arkVideos.get(call, target, upstreamId));
    expect(view.state).toBe('cancelled');
  });

  it('a running task cannot be cancelled: the refusal is reported, the task runs on', async () => {
    const { upstreamId } = await arkVideos.create(call, target, req);
    await eventually(async () => (arkVideos.view(await arkVideos.get(call, target, upstreamId)).state === 'running' ? true : undefined), 5000, 'running');
    const out = await arkVideos.cancel!(call, target, upstreamId);
    expect(out.accepted).toBe(false);
    expect(out.message).toMatch(/queued/);
    expect(arkVideos.view(await arkVideos.get(call, target, upstreamId)).state).toBe('running');
  });
});
