// The video task poller's cost: the gateway's CPU time over a window with no open task, then
// with `open` open tasks, and how many polls a second it made. The open tasks are real tasks of
// the simulator on its "[stuck]" path (running forever, so every poll finds them unchanged),
// created on the simulator directly and stored as clones of one task created through the API:
// the figure is the poller's, not task creation's. It is measured once every task was polled once
// (the steady state), and `notPolledIn2x` counts the open tasks not polled at all during a window of
// 2 × poll_interval_ms (the target: none).
import { fetch } from 'undici';
import { performance } from 'node:perf_hooks';
import { cpuSeconds } from '../lib/children.mjs';
import { seedOpenTasks } from '../lib/seed-tasks.mjs';
import { VIDEO_MODEL } from '../lib/mediagate.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function simPolls(up) {
  const res = await fetch(`${up.url}/__sim/stats`);
  const { counts } = await res.json();
  return counts['ark.video.get'] ?? 0;
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
  const polls = (await simPolls(up)) - polls0;
  return {
    seconds: Math.round(wall * 10) / 10,
    cpuPercent: Math.round((cpu / wall) * 1000) / 10,
    pollsPerS: Math.round(polls / wall),
    cpuMsPerPoll: polls ? Math.round((cpu * 1000 * 100) / polls) / 100 : null,
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
  return { open: P.poller.open, pollIntervalMs: ctx.pollIntervalMs, tickMs: ctx.tickMs, batch: ctx.batch, idle, firstRoundDone, busy, notPolledIn2x };
}
