// Streamed chat: the time to first token each proxy adds (one stream at a time), then how many
// streams each holds at once when `count` of them open at `ratePerS` and stay open until the
// upstream ends them, with the proxy process's peak RSS over that test.
import { fileURLToPath } from 'node:url';
import { latency } from '../lib/measure.mjs';
import { runJob, memory, resetPeak, cpuSeconds } from '../lib/children.mjs';

const STREAMS = fileURLToPath(new URL('../lib/streams-child.mjs', import.meta.url));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export async function streamsPhase(ctx) {
  const { P, streamTargets, pids } = ctx;
  const c1 = await latency(
    Object.fromEntries(Object.entries(streamTargets).map(([n, t]) => [n, { ...t, body: ctx.bodies.stream }])),
    { ...P.latency, firstByte: true },
  );
  const addedTtftC1 = {};
  for (const name of Object.keys(streamTargets)) {
    if (name !== 'direct') addedTtftC1[name] = { p50Ms: c1[name].firstByte.p50Ms - c1.direct.firstByte.p50Ms, p99Ms: c1[name].firstByte.p99Ms - c1.direct.firstByte.p99Ms };
  }

  // The opening burst runs `rounds` times, the targets taking turns (a burst of outside load hits
  // them alike). Per target: time to first token from its best round (lowest p99), as req/s is
  // taken from the best round (the target compares the rounds one by one: report.mjs); streams
  // held and failures over all rounds (the fewest held, every failure); peak RSS from the first
  // round, the one burst in a fresh process (a later one starts from the connection pool the
  // first left idle: docs/benchmarks.md, "Peak RSS"), every round's in `rounds`.
  const rounds = {};
  for (let pass = 0; pass < (P.streams.rounds ?? 1); pass++) {
    for (const [name, t] of Object.entries(streamTargets)) {
      (rounds[name] ??= []).push(await heldRound(ctx, pids[name], t));
      // Let closed sockets drain before the next proxy's turn.
      await sleep(P.streams.pauseMs);
    }
  }
  const held = {};
  for (const [name, rs] of Object.entries(rounds)) {
    const best = rs.reduce((a, b) => (b.ttftP99Ms < a.ttftP99Ms ? b : a));
    held[name] = {
      ...best,
      maxOpen: Math.min(...rs.map((r) => r.maxOpen)),
      completed: rs.reduce((n, r) => n + r.completed, 0),
      failed: rs.reduce((n, r) => n + r.failed, 0),
      failures: rs.reduce((all, r) => {
        for (const [k, v] of Object.entries(r.failures ?? {})) all[k] = (all[k] ?? 0) + v;
        return all;
      }, {}),
      rssBeforeMb: rs[0].rssBeforeMb,
      peakRssMb: rs[0].peakRssMb,
      rounds: rs.map((r) => ({ ttftP99Ms: r.ttftP99Ms, peakRssMb: r.peakRssMb, cpuS: r.cpuS })),
    };
  }
  const addedTtftHeld = {};
  for (const name of Object.keys(held)) {
    if (name !== 'direct') addedTtftHeld[name] = { p50Ms: held[name].ttftP50Ms - held.direct.ttftP50Ms, p99Ms: held[name].ttftP99Ms - held.direct.ttftP99Ms };
  }
  return { ttftC1: c1, addedTtftC1, held, addedTtftHeld };
}

/** One opening burst against one target, with the target process's peak RSS and CPU meanwhile. */
async function heldRound(ctx, pid, t) {
  const { P } = ctx;
  const peakReset = resetPeak(pid);
  const before = memory(pid);
  const cpu0 = cpuSeconds(pid);
  let sampledPeak = before.rssMb;
  const sampler = setInterval(() => {
    try {
      sampledPeak = Math.max(sampledPeak, memory(pid).rssMb);
    } catch {
      // the process is gone; the job reports the failures
    }
  }, 100);
  const r = await runJob(STREAMS, {
    url: t.url,
    path: t.path,
    headers: t.headers,
    body: ctx.bodies.hold,
    count: P.streams.count,
    ratePerS: P.streams.ratePerS,
    deadlineMs: (P.streams.count / P.streams.ratePerS) * 1000 + P.streams.holdMs + 30_000,
  });
  clearInterval(sampler);
  const after = memory(pid);
  return {
    ...r,
    rssBeforeMb: round(before.rssMb),
    peakRssMb: round(peakReset ? Math.max(after.peakMb, sampledPeak) : sampledPeak),
    cpuS: round(cpuSeconds(pid) - cpu0),
  };
}

const round = (x) => Math.round(x * 10) / 10;
