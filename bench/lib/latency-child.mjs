// Latency probe process: one keep-alive connection per target, one request at a time, timed with
// hrtime (autocannon's histogram only resolves whole milliseconds). Targets take turns in short
// slices over several rounds, so a burst of load from elsewhere on the machine hits all of them
// alike.
// Job: { targets: [{ name, url, method, path|paths, headers, body, ids? }], rounds, sliceMs, warmupMs,
//        firstByte?: boolean }
// firstByte: also time the first body chunk (time to first token of a stream).
// Reply: { [name]: { n, p50Ms, p90Ms, p99Ms, meanMs, firstByte?: { p50Ms, p99Ms } } }
import { performance } from 'node:perf_hooks';
import { Client } from 'undici';
import { withIds } from './fresh-ids.mjs';

function percentile(sorted, p) {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

function summary(values) {
  const s = Float64Array.from(values).sort();
  const mean = s.reduce((a, b) => a + b, 0) / (s.length || 1);
  return { n: s.length, p50Ms: percentile(s, 50), p90Ms: percentile(s, 90), p99Ms: percentile(s, 99), meanMs: mean };
}

async function once(client, t, firstByte) {
  const path = t.paths ? t.paths[(Math.random() * t.paths.length) | 0] : t.path;
  const start = process.hrtime.bigint();
  const res = await client.request({ path, method: t.method ?? 'GET', headers: withIds(t), body: t.body });
  let first = 0n;
  for await (const chunk of res.body) {
    if (!first && chunk.length) first = process.hrtime.bigint();
  }
  const end = process.hrtime.bigint();
  if (res.statusCode !== 200) throw new Error(`${t.name}: ${t.method ?? 'GET'} ${path} answered ${res.statusCode}`);
  return { total: Number(end - start) / 1e6, first: firstByte ? Number(first - start) / 1e6 : 0 };
}

async function slice(client, t, ms, sink) {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    const r = await once(client, t, sink.firstByte);
    if (sink.total) {
      sink.total.push(r.total);
      if (sink.firstByte) sink.first.push(r.first);
    }
  }
}

process.once('message', async (job) => {
  try {
    const clients = job.targets.map((t) => new Client(new URL(t.url).origin, { keepAliveTimeout: 60_000, pipelining: 1 }));
    const data = job.targets.map(() => ({ total: [], first: [], firstByte: !!job.firstByte }));
    for (let i = 0; i < job.targets.length; i++) await slice(clients[i], job.targets[i], job.warmupMs, { firstByte: false });
    for (let r = 0; r < job.rounds; r++) {
      for (let i = 0; i < job.targets.length; i++) await slice(clients[i], job.targets[i], job.sliceMs, data[i]);
    }
    const out = {};
    job.targets.forEach((t, i) => {
      out[t.name] = summary(data[i].total);
      if (job.firstByte) out[t.name].firstByte = summary(data[i].first);
    });
    await Promise.all(clients.map((c) => c.close()));
    process.send(out);
  } catch (err) {
    process.send({ error: String(err?.stack ?? err) });
  }
  process.exit(0);
});
