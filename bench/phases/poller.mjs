// The video task poller's cost: the gateway's CPU time over a window with no open task, then
// with `open` open tasks, and how many polls a second it made. The open tasks are real tasks of
// the simulator on its "[stuck]" path (running forever, so every poll finds them unchanged),
// created on the simulator directly and stored as clones of one task created through the API:
// the figure is the poller's, not task creation's. A poll is a task read at the simulator: a GET of
// the task, or its line in a batched read (Ark's task list by id). It is measured once every task was polled once
// (the steady state), and `notPolledIn2x` counts the open tasks not polled at all during a window of
// 2 × poll_interval_ms (the target: none). Then `callbacks`: provider reads per finished task with
// plain polling and with provider callbacks (two more gateways; tasks of six poll intervals).
import { fetch } from 'undici';
import { performance } from 'node:perf_hooks';
import { cpuSeconds } from '../lib/children.mjs';
import { seedOpenTasks } from '../lib/seed-tasks.mjs';
import { createServer } from 'node:net';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { VIDEO_MODEL, createKey, startMediagate } from '../lib/mediagate.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Task reads so far (a GET of one task, or one task's line in a list by id) and the provider calls that made them. */
async function simPolls(up) {
  const { counts } = await (await fetch(`${up.url}/__sim/stats`)).json();
  const { task_reads } = await (await fetch(`${up.url}/__sim/video/stats`)).json();
  return { reads: task_reads, calls: (counts['ark.video.get'] ?? 0) + (counts['ark.video.list'] ?? 0) };
}

/** Polls of each of `ids` so far, by the simulator's count. */
async function pollsOf(up, ids) {
  const res = await fetch(`${up.url}/__sim/video/stats`);
  const { tasks } = await res.json();
  return ids.map((id) => tasks[id]?.polls ?? 0);
}

/** Waits (up to `ms`) until every one of `ids` was polled at least once. */
async function firstRound(up, ids, ms) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if ((await pollsOf(up, ids)).every((n) => n > 0)) return true;
    await sleep(1000);
  }
  return false;
}

/** How many of `ids` were not polled at all during `ms` (the target: none within 2 × the interval). */
async function missed(up, ids, ms) {
  const before = await pollsOf(up, ids);
  await sleep(ms);
  const after = await pollsOf(up, ids);
  return after.filter((n, i) => n === before[i]).length;
}

async function window(gw, up, seconds) {
  const cpu0 = cpuSeconds(gw.pid);
  const polls0 = await simPolls(up);
  const t0 = performance.now();
  await sleep(seconds * 1000);
  const wall = (performance.now() - t0) / 1000;
  const cpu = cpuSeconds(gw.pid) - cpu0;
  const polls1 = await simPolls(up);
  const polls = polls1.reads - polls0.reads;
  const calls = polls1.calls - polls0.calls;
  return {
    seconds: Math.round(wall * 10) / 10,
    cpuPercent: Math.round((cpu / wall) * 1000) / 10,
    pollsPerS: Math.round(polls / wall),
    cpuMsPerPoll: polls ? Math.round((cpu * 1000 * 1000) / polls) / 1000 : null,
    // Provider calls that made those polls (a batched read answers up to 100 tasks in one call).
    callsPerS: Math.round(calls / wall),
    pollsPerCall: calls ? Math.round((polls / calls) * 10) / 10 : null,
  };
}

/** Creates `n` stuck tasks on the simulator (Ark's create call), 32 at a time; returns their ids. */
async function simulatorTasks(up, n) {
  const body = JSON.stringify({ model: VIDEO_MODEL, content: [{ type: 'text', text: '[stuck] a corgi runs on grass' }] });
  const ids = [];
  let next = 0;
  const worker = async () => {
    while (next < n) {
      next++;
      const res = await fetch(`${up.url}/api/v3/contents/generations/tasks`, { method: 'POST', headers: { authorization: 'Bearer ark-bench-upstream', 'content-type': 'application/json' }, body });
      const j = await res.json();
      if (res.status !== 200) throw new Error(`simulator task create answered ${res.status}: ${JSON.stringify(j)}`);
      ids.push(j.id);
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
  return ids;
}

/** A free loopback port (for a gateway whose public_url must be known before it starts). */
function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/**
 * Provider reads per finished task, without and with provider callbacks: two gateways (default
 * task settings, one with server.public_url so the simulator's Ark part calls it back) each run
 * `tasks` tasks of `videoS` seconds to the end at once; reads are the simulator's count of GETs of
 * each task.
 */
async function callbackReads(ctx, tasks, videoS) {
  const { up, root, tmp, configPath } = ctx;
  const base = JSON.parse(readFileSync(configPath, 'utf8'));
  const gateways = [];
  for (const mode of ['polling', 'callbacks']) {
    const port = await freePort();
    const cfg = JSON.parse(JSON.stringify(base));
    cfg.database.url = `sqlite:${join(tmp, `mediagate-${mode}.db`)}`;
    cfg.server = { ...cfg.server, port, ...(mode === 'callbacks' ? { public_url: `http://127.0.0.1:${port}` } : {}) };
    const path = join(tmp, `mediagate-${mode}.json`);
    writeFileSync(path, JSON.stringify(cfg, null, 2));
    const key = createKey(root, path).key;
    gateways.push({ mode, key, gw: await startMediagate(root, path) });
  }
  const setSeconds = (s) => fetch(`${up.url}/__sim/video/config`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ video_seconds: s }) }).then((r) => r.json());
  const before = (await setSeconds(videoS)).video_seconds;
  const out = {};
  try {
    const runs = gateways.map(async ({ mode, key, gw }) => {
      const auth = { authorization: `Bearer ${key}` };
      const ids = [];
      for (let i = 0; i < tasks; i++) {
        const res = await fetch(`${gw.url}/v1/video/generations`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify({ model: VIDEO_MODEL, prompt: `a corgi ${mode} ${i}`, duration: 5, resolution: '720p', ratio: '16:9' }),
        });
        const j = await res.json();
        if (res.status !== 200) throw new Error(`creating a task answered ${res.status}: ${JSON.stringify(j).slice(0, 300)}`);
        ids.push(j.data.task_id);
      }
      const t0 = performance.now();
      const until = Date.now() + videoS * 1000 * 4 + 120_000;
      for (;;) {
        const states = await Promise.all(ids.map((id) => fetch(`${gw.url}/v1/video/generations/${id}`, { headers: auth }).then((r) => r.json())));
        if (states.every((s) => s.data?.status === 'SUCCESS' || s.data?.status === 'FAILURE')) break;
        if (Date.now() > until) throw new Error(`${mode}: tasks did not finish`);
        await sleep(250);
      }
      const seconds = (performance.now() - t0) / 1000;
      const reads = await pollsOf(up, ids);
      const total = reads.reduce((a, b) => a + b, 0);
      out[mode] = { tasks, readsPerTask: Math.round((total / tasks) * 100) / 100, maxReads: Math.max(...reads), secondsToFinishAll: Math.round(seconds * 10) / 10 };
    });
    await Promise.all(runs);
  } finally {
    await setSeconds(before);
    for (const g of gateways) await g.gw.stop();
  }
  return { videoSeconds: videoS, ...out };
}

export async function pollerPhase(ctx) {
  const { mgLarge, up, P } = ctx;
  const idle = await window(mgLarge, up, P.poller.idleS);
  const ids = await simulatorTasks(up, P.poller.open);
  seedOpenTasks(ctx.dbLargePath, ctx.openTemplateId, ids, ctx.pollIntervalMs);
  // Every task is due within one poll interval; measure after the first round of polls (whose
  // answers are new, so written), in the steady state where a poll finds the task unchanged.
  const firstRoundDone = await firstRound(up, ids, Math.max(60_000, ctx.pollIntervalMs * 4));
  const busy = await window(mgLarge, up, P.poller.windowS);
  const notPolledIn2x = await missed(up, ids, 2 * ctx.pollIntervalMs);
  // Videos of six poll intervals (30 s with the default 5 s): several polls each without callbacks.
  const callbacks = await callbackReads(ctx, P.poller.callbackTasks ?? 20, P.poller.callbackVideoS ?? (6 * ctx.pollIntervalMs) / 1000);
  return { open: P.poller.open, pollIntervalMs: ctx.pollIntervalMs, tickMs: ctx.tickMs, batch: ctx.batch, idle, firstRoundDone, busy, notPolledIn2x, callbacks };
}
