// Non-streamed chat completions: max req/s and p50/p99 under load through each proxy and
// straight to the upstream, then the latency each proxy adds one request at a time.
import { throughput, latency } from '../lib/measure.mjs';

export async function chatPhase(ctx) {
  const { P, chatTargets } = ctx;
  const load = await throughput(chatTargets, { ...P.load, rounds: P.chatRounds });
  // Targets with before/after hooks (a config switched for their turn) take their latency slices
  // in a run of their own, beside the direct path again; the others share one run.
  const hooked = Object.keys(chatTargets).filter((name) => chatTargets[name].before);
  const plain = Object.fromEntries(Object.entries(chatTargets).filter(([name]) => !hooked.includes(name)));
  const lat = await latency(plain, P.latency);
  const direct = {};
  for (const name of hooked) {
    const t = chatTargets[name];
    await t.before();
    const own = await latency({ direct: chatTargets.direct, [name]: t }, P.latency);
    await t.after();
    lat[name] = own[name];
    direct[name] = own.direct;
  }
  const added = {};
  for (const name of Object.keys(chatTargets)) {
    if (name === 'direct') continue;
    const base = direct[name] ?? lat.direct;
    added[name] = { p50Ms: lat[name].p50Ms - base.p50Ms, p99Ms: lat[name].p99Ms - base.p99Ms };
  }
  return { load, latencyC1: lat, addedC1: added };
}
