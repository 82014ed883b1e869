// The two ways the bench takes a figure: max req/s under concurrent load (autocannon, in its own
// process) and latency one request at a time (latency-child, hrtime-resolved).
import { fileURLToPath } from 'node:url';
import { runJob, cpuSeconds } from './children.mjs';

const AUTOCANNON = fileURLToPath(new URL('./autocannon-child.mjs', import.meta.url));
const LATENCY = fileURLToPath(new URL('./latency-child.mjs', import.meta.url));

/**
 * Max req/s of each target, targets taking turns over `rounds` rounds (so a burst of outside load
 * hits them alike); each target's best round gives its req/s, and every round's req/s and CPU ms
 * per request are kept for pairedRatio(). Every target is warmed up first (JIT, connection pools)
 * and a round with a non-2xx answer or an error is reported, not hidden.
 * targets: { name: { url, path, method, headers, body, paths?, ids?, pid?, pids?, before?, after? } } (ids:
 * [<id>] in a header value is replaced per request; pid or
 * pids: the server processes, for their CPU time per request; before/after: called around the
 * target's warm-up and each of its measured rounds, after's result is merged into the round's)
 */
export async function throughput(targets, { rounds, warmS, measureS, connections }) {
  const job = (t, durationS) => ({
    url: t.url + (t.path ?? '/'),
    method: t.method ?? 'GET',
    headers: t.headers,
    body: t.body,
    paths: t.paths,
    idReplacement: t.ids,
    connections,
    durationS,
  });
  for (const t of Object.values(targets)) {
    if (warmS <= 0) continue;
    if (t.before) await t.before();
    await runJob(AUTOCANNON, job(t, warmS));
    if (t.after) await t.after();
  }
  const all = {};
  for (let r = 0; r < rounds; r++) {
    for (const [name, t] of Object.entries(targets)) {
      // pids: every process serving the target (instances behind a balancer), summed.
      if (t.before) await t.before();
      const pids = t.pids ?? (t.pid ? [t.pid] : []);
      const cpu = () => pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0);
      const cpu0 = cpu();
      const res = await runJob(AUTOCANNON, job(t, measureS));
      // CPU time of the server process per answered request: unlike req/s it barely moves when
      // other programs compete for the cores, so it shows what a path costs on a loaded machine.
      if (pids.length) res.cpuMsPerReq = ((cpu() - cpu0) * 1000) / Math.max(1, res.ok + res.non2xx);
      if (t.after) Object.assign(res, await t.after());
      (all[name] ??= []).push(res);
    }
  }
  const out = {};
  for (const [name, results] of Object.entries(all)) {
    const best = results.reduce((a, b) => (b.rps > a.rps ? b : a));
    const cpu = results.map((x) => x.cpuMsPerReq).filter((x) => x !== undefined);
    out[name] = {
      ...best,
      // The lowest CPU per request over the rounds: the least disturbed measurement.
      cpuMsPerReq: cpu.length ? Math.min(...cpu) : undefined,
      rps: Math.round(best.rps),
      rounds: results.map((x) => Math.round(x.rps)),
      cpuRounds: results.map((x) => x.cpuMsPerReq),
      failures: results.reduce((n, x) => n + x.non2xx + x.errors + x.timeouts, 0),
    };
  }
  return out;
}

/**
 * The ratio a / b of two targets of one throughput() call taken within each round, then the
 * median over the rounds. A 2-core virtual machine's speed drifts by up to 1.8× within a minute
 * (two identical raw servers taking turns track each other through it): a ratio of best rounds can
 * set one target's fast moment against the other's slow one, while the two turns of one round are
 * seconds apart and share most of the drift.
 * field: 'rounds' (req/s) or 'cpuRounds' (CPU ms per request).
 */
export function pairedRatio(a, b, field = 'rounds') {
  const xs = a?.[field] ?? [];
  const ys = b?.[field] ?? [];
  const each = [];
  for (let i = 0; i < Math.min(xs.length, ys.length); i++) if (Number.isFinite(xs[i]) && Number.isFinite(ys[i]) && ys[i] > 0) each.push(xs[i] / ys[i]);
  if (!each.length) return { median: NaN, each };
  const sorted = [...each].sort((x, y) => x - y);
  const mid = sorted.length >> 1;
  return { median: sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2, each };
}

/**
 * p50/p99 of each target one request at a time, in turns of `sliceMs` over `rounds` rounds.
 * firstByte: also the time to the first body byte (time to first token of a stream).
 */
export function latency(targets, { rounds, sliceMs, warmupMs, firstByte = false }) {
  const list = Object.entries(targets).map(([name, t]) => ({ name, ...t }));
  return runJob(LATENCY, { targets: list, rounds, sliceMs, warmupMs, firstByte });
}

/** Loads a target with a fixed number of requests (e.g. to create tasks). */
export function fire(t, amount, connections) {
  return runJob(AUTOCANNON, { url: t.url + t.path, method: t.method ?? 'POST', headers: t.headers, body: t.body, amount, connections });
}
