import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';
import { UpstreamClient } from '../../src/upstream/client.js';
import { UpstreamFailure } from '../../src/upstream/failure.js';
import { targetFor } from '../../src/upstream/target.js';
import { ARK_LIST_IDS, arkVideos } from '../../src/providers/ark/videos.js';
import { simFault } from '../helpers/video.js';

// The Ark adapter's batched read (GET …/contents/generations/tasks with filter.task_ids), against
// the simulator's Ark part over HTTP: the same task objects as single reads, unknown ids left out.

describe('Ark video adapter: getMany', () => {
  let sim: Simulator;
  const upstream = new UpstreamClient({ connectMs: 2000, firstByteMs: 5000, idleMs: 5000 });
  const call = { upstream };
  let target: ReturnType<typeof targetFor>;
  const req = (prompt: string) => ({ prompt, mode: 'text' as const, images: [], params: {}, metadata: {} });

  beforeAll(async () => {
    sim = await startSimulator({ videoSeconds: 0.2 });
    target = targetFor({ name: 'ark', type: 'ark', base_url: sim.url, api_key: 'k-simulated', priority: 0, weight: 1, enabled: true, models: ['m'], model_map: {}, poll_concurrency: 1 }, 'doubao-seedance-1-0-pro-250528');
  });
  afterAll(async () => {
    await upstream.close();
    await sim.close();
  });

  const counts = async () => ((await (await fetch(`${sim.url}/__sim/stats`)).json()) as { counts: Record<string, number> }).counts;

  it('reads many tasks in one call, each exactly as a single read answers it', async () => {
    const ids: string[] = [];
    for (const prompt of ['one', 'two [fail]', 'three [stuck]']) ids.push((await arkVideos.create(call, target, req(prompt))).upstreamId);
    await new Promise((r) => setTimeout(r, 400));
    const before = await counts();
    const found = await arkVideos.getMany!(call, target, [...ids, 'cgt-20250101000000-gone0']);
    expect((await counts())['ark.video.list']).toBe((before['ark.video.list'] ?? 0) + 1);
    expect([...found.keys()].sort()).toEqual([...ids].sort());
    for (const id of ids) {
      const single = await arkVideos.get(call, target, id);
      // The signed URL of a finished task is minted at each read; everything else is the same.
      const strip = (t: Record<string, unknown>) => ({ ...t, content: t.content ? 'url' : undefined });
      expect(strip(found.get(id)!)).toEqual(strip(single));
    }
    expect(arkVideos.view(found.get(ids[0])!).state).toBe('succeeded');
    expect(arkVideos.view(found.get(ids[1])!).state).toBe('failed');
    expect(arkVideos.view(found.get(ids[2])!).state).toBe('running');
  });

  it('takes up to ARK_LIST_IDS ids per call', () => {
    expect(arkVideos.getManyMax).toBe(ARK_LIST_IDS);
    expect(ARK_LIST_IDS).toBeGreaterThan(1);
    expect(ARK_LIST_IDS).toBeLessThanOrEqual(500);
  });

  it('reports a provider error as an UpstreamFailure, like a single read', async () => {
    await simFault(sim.url, { match: 'ark.video.list', kind: 'status', status: 503, count: 1 });
    const err = await arkVideos.getMany!(call, target, ['cgt-20250101000000-aaaaa', 'cgt-20250101000000-bbbbb']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamFailure);
    expect((err as UpstreamFailure).status).toBe(503);
    expect((err as UpstreamFailure).retryable).toBe(true);
  });
});
