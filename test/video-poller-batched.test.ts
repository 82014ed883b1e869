import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from './helpers/gateway.js';
import { ARK_LIST_IDS } from '../src/providers/ark/videos.js';
import { createTask, eventually, simFault, simVideoStats } from './helpers/video.js';

// The poller's batched reads, through the gateway against the simulator's Ark part: the due tasks
// of one claim and channel are read with Ark's task list by id, ARK_LIST_IDS per call, and each is
// still finished and settled (or refunded) exactly once. The poller is driven by hand (tick()).

const START = 500_000_000;
const MODEL = 'doubao-seedance-1-0-pro-250528';

describe('video task poller: batched provider reads', () => {
  let gw: TestGateway;
  let sim: string;
  beforeAll(async () => {
    gw = await startGateway({ tasks: { poll_interval_ms: 50, tick_ms: 20, batch: 400, max_backoff_ms: 100 } }, { noPoller: true });
    sim = gw.services.simulator!.url;
  });
  afterAll(async () => gw.close());

  const counts = async () => ((await (await fetch(`${sim}/__sim/stats`)).json()) as { counts: Record<string, number> }).counts;
  const calls = async () => {
    const c = await counts();
    return { list: c['ark.video.list'] ?? 0, get: c['ark.video.get'] ?? 0 };
  };

  async function createMany(key: string, prompts: string[]): Promise<string[]> {
    const ids: string[] = [];
    for (const prompt of prompts) {
      const res = await createTask(gw.url, key, { model: MODEL, prompt, duration: 2, resolution: '480p' });
      expect(res.status).toBe(200);
      ids.push(res.body.data.task_id);
    }
    return ids;
  }

  /** Waits until the simulator has finished every task (its own clock), so one read each settles them. */
  async function providerDone(upstreamIds: string[]) {
    await eventually(async () => {
      const { tasks } = await simVideoStats(sim);
      return upstreamIds.every((id) => ['succeeded', 'failed'].includes(tasks[id]?.status));
    }, 10_000, 'the provider to finish');
  }

  async function rowsOf(ids: string[]) {
    return Promise.all(ids.map(async (id) => (await gw.services.tasks.repo.get(id))!));
  }

  async function settleRows(keyId: string) {
    await gw.services.ledger.flush();
    return gw.services.store.db.selectFrom('usage').selectAll().where('key_id', '=', keyId).where('endpoint', '=', 'video.settle').execute();
  }

  it(`reads N due tasks in ceil(N / ${ARK_LIST_IDS}) list calls and settles each exactly once`, async () => {
    const n = ARK_LIST_IDS + 30;
    const { id: keyId, key } = await gw.createKey({ creditMicros: START });
    const prompts = Array.from({ length: n }, (_, i) => (i % 10 === 3 ? `batched ${i} [fail]` : `batched ${i}`));
    const ids = await createMany(key, prompts);
    const upstreamIds = (await rowsOf(ids)).map((r) => r.upstream_id);
    await providerDone(upstreamIds);

    const before = await calls();
    const readsBefore = (await simVideoStats(sim)).tasks;
    await gw.services.tasks.poller.tick();
    await eventually(async () => (await rowsOf(ids)).every((r) => r.status === 'SUCCESS' || r.status === 'FAILURE'), 10_000, 'every task finished');
    const after = await calls();
    expect(after.list - before.list).toBe(Math.ceil(n / ARK_LIST_IDS));
    expect(after.get - before.get).toBe(0);
    const reads = (await simVideoStats(sim)).tasks;
    for (const u of upstreamIds) expect(reads[u].polls - readsBefore[u].polls).toBe(1);

    const rows = await rowsOf(ids);
    const failed = rows.filter((r) => r.status === 'FAILURE');
    expect(failed.length).toBe(prompts.filter((p) => p.includes('[fail]')).length);
    for (const r of failed) expect(r.fail_reason).toMatch(/^OutputVideoSensitiveContentDetected: /);
    // Exactly one settle per task (a ledger row each), every reservation closed once. (A task is
    // moved before its hold is closed: wait for the last closes.)
    const settled = await eventually(async () => {
      const got = await settleRows(keyId);
      return got.length >= n ? got : undefined;
    }, 10_000, 'every hold closed');
    expect(settled.length).toBe(n);
    expect(settled.filter((r) => r.status === 200).length).toBe(n - failed.length);
    const reservations = await gw.services.store.db.selectFrom('reservations').selectAll().where('key_id', '=', keyId).execute();
    expect(reservations.length).toBe(n);
    expect(reservations.filter((r) => r.state === 'settled').length).toBe(n - failed.length);
    expect(reservations.filter((r) => r.state === 'released').length).toBe(failed.length);
    const charged = reservations.reduce((s, r) => s + Number(r.charged_micros), 0);
    expect(await gw.services.credit.spendable(keyId)).toBe(START - charged);

    // Nothing open is left: another tick reads nothing and charges nothing.
    await gw.services.tasks.poller.tick(Date.now() + 60_000);
    await new Promise((r) => setTimeout(r, 200));
    expect(await calls()).toEqual(after);
    expect((await settleRows(keyId)).length).toBe(n);
  });

  it('reads a task the list answer left out alone; a provider 404 then fails and refunds it', async () => {
    const { id: keyId, key } = await gw.createKey({ creditMicros: START });
    const ids = await createMany(key, ['kept 1', 'kept 2', 'deleted at the provider']);
    const upstreamIds = (await rowsOf(ids)).map((r) => r.upstream_id);
    await providerDone(upstreamIds);
    // Ark deletes a finished task on DELETE: the list no longer has it, nor has a single read.
    const del = await fetch(`${sim}/api/v3/contents/generations/tasks/${upstreamIds[2]}`, { method: 'DELETE', headers: { authorization: 'Bearer x' } });
    expect(del.status).toBe(200);

    const before = await calls();
    await gw.services.tasks.poller.tick();
    await eventually(async () => (await rowsOf(ids)).every((r) => r.status === 'SUCCESS' || r.status === 'FAILURE'), 10_000, 'every task finished');
    const after = await calls();
    expect(after.list - before.list).toBe(1);
    expect(after.get - before.get).toBe(1);
    const rows = await rowsOf(ids);
    expect(rows.map((r) => r.status)).toEqual(['SUCCESS', 'SUCCESS', 'FAILURE']);
    expect(rows[2].fail_reason).toMatch(/^ResourceNotFound: /);
    await eventually(async () => (await settleRows(keyId)).length >= 3, 10_000, 'every hold closed');
    const reservations = await gw.services.store.db.selectFrom('reservations').selectAll().where('key_id', '=', keyId).execute();
    expect(reservations.map((r) => r.state).sort()).toEqual(['released', 'settled', 'settled']);
    expect((await settleRows(keyId)).length).toBe(3);
  });

  it('backs every task off when the list call answers 5xx, and reads them one by one when it answers 400', async () => {
    const { key } = await gw.createKey({ creditMicros: START });
    const ids = await createMany(key, ['flaky 1', 'flaky 2', 'flaky 3']);
    await providerDone((await rowsOf(ids)).map((r) => r.upstream_id));

    await simFault(sim, { match: 'ark.video.list', kind: 'status', status: 503, count: 1 });
    let before = await calls();
    await gw.services.tasks.poller.tick();
    const backedOff = await eventually(async () => {
      const rows = await rowsOf(ids);
      return rows.every((r) => r.poll_failures === 1) ? rows : undefined;
    }, 10_000, 'every task backed off');
    for (const r of backedOff) expect(r.status).toBe('SUBMITTED');
    let after = await calls();
    expect([after.list - before.list, after.get - before.get]).toEqual([1, 0]);

    // A refusal that is not the provider being busy: each task is read alone (and finishes).
    await simFault(sim, { match: 'ark.video.list', kind: 'status', status: 400, count: 1 });
    before = after;
    await gw.services.tasks.poller.tick(Date.now() + 60_000);
    await eventually(async () => (await rowsOf(ids)).every((r) => r.status === 'SUCCESS'), 10_000, 'every task finished');
    after = await calls();
    expect([after.list - before.list, after.get - before.get]).toEqual([1, 3]);
    for (const r of await rowsOf(ids)) expect(r.poll_failures).toBe(0);
  });
});
