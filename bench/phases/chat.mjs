// Non-streamed chat completions: max req/s and p50/p99 under load through each proxy and
// straight to the upstream, then the latency each proxy adds one request at a time.
import { throughput, latency } from '../lib/measure.mjs';

export async function chatPhase(ctx) {
  const { P, chatTargets } = ctx;
  const load = await throughput(chatTargets, P.load);
  const lat = await latency(chatTargets, P.latency);
  const added = {};
  for (const name of Object.keys(chatTargets)) {
    if (name === 'direct') continue;
    added[name] = { p50Ms: lat[name].p50Ms - lat.direct.p50Ms, p99Ms: lat[name].p99Ms - lat.direct.p99Ms };
  }
  return { load, latencyC1: lat, addedC1: added };
}
