// Load generator process: runs one autocannon job sent by the parent over IPC and sends back a
// summary. Living in its own process keeps the load's CPU out of the servers' figures.
// Job: { url, connections, durationS?, amount?, method?, headers?, body?, paths?: string[], idReplacement?: boolean }
// `paths` makes every request pick a random path from the list (task reads over many ids);
// `idReplacement` replaces [<id>] in each request (a header too) with a new id.
import autocannon from 'autocannon';

process.once('message', async (job) => {
  try {
    const opts = {
      url: job.url,
      connections: job.connections,
      pipelining: 1,
      method: job.method ?? 'GET',
      headers: job.headers ?? {},
      body: job.body,
      timeout: 30,
      idReplacement: Boolean(job.idReplacement),
    };
    if (job.amount) opts.amount = job.amount;
    else opts.duration = job.durationS;
    if (job.paths?.length) {
      const paths = job.paths;
      opts.requests = [
        {
          setupRequest(req) {
            req.path = paths[(Math.random() * paths.length) | 0];
            return req;
          },
        },
      ];
    }
    const r = await autocannon(opts);
    const ok = r['2xx'];
    process.send({
      rps: ok / r.duration,
      ok,
      non2xx: r.non2xx,
      errors: r.errors,
      timeouts: r.timeouts,
      durationS: r.duration,
      // autocannon's latency histogram has 1 ms resolution; the concurrency-1 figures come from
      // latency-child.mjs instead.
      p50Ms: r.latency.p50,
      p99Ms: r.latency.p99,
      meanMs: r.latency.mean,
      bytesPerReq: ok ? r.throughput.total / (ok + r.non2xx) : 0,
    });
  } catch (err) {
    process.send({ error: String(err?.stack ?? err) });
  }
  process.exit(0);
});
