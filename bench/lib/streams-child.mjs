// Stream load process: opens `count` streamed chat completions against one target, `ratePerS`
// new streams a second, each on its own connection, and keeps every stream open until the
// upstream ends it. It reports the time to the first body byte of each stream and the largest
// number of streams that were open (first byte seen, not yet ended) at one moment.
// Job: { url, path, headers, body, count, ratePerS, deadlineMs }
import { performance } from 'node:perf_hooks';
import http from 'node:http';

function percentile(sorted, p) {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

process.once('message', (job) => {
  const target = new URL(job.url);
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  const ttft = [];
  let open = 0;
  let maxOpen = 0;
  let completed = 0;
  let failed = 0;
  let started = 0;
  const reasons = new Map();
  const requests = new Set();
  const fail = (why) => {
    failed++;
    reasons.set(why, (reasons.get(why) ?? 0) + 1);
  };

  const t0 = performance.now();
  const finishIfDone = () => {
    if (completed + failed === job.count) finish();
  };
  let finished = false;
  const finish = () => {
    if (finished) return;
    finished = true;
    clearTimeout(deadline);
    for (const r of requests) r.destroy();
    const s = Float64Array.from(ttft).sort();
    process.send({
      count: job.count,
      completed,
      failed,
      failures: Object.fromEntries(reasons),
      maxOpen,
      ttftP50Ms: percentile(s, 50),
      ttftP99Ms: percentile(s, 99),
      ttftMaxMs: s.length ? s[s.length - 1] : NaN,
      elapsedS: (performance.now() - t0) / 1000,
    });
    setImmediate(() => process.exit(0));
  };
  const deadline = setTimeout(() => {
    const left = job.count - completed - failed;
    failed += left;
    reasons.set('unfinished at the deadline', left);
    finish();
  }, job.deadlineMs);

  function openOne() {
    started++;
    const start = performance.now();
    let seenFirst = false;
    let tail = '';
    const req = http.request(
      { agent, host: target.hostname, port: target.port, path: job.path, method: 'POST', headers: { 'content-type': 'application/json', ...job.headers } },
      (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          requests.delete(req);
          fail(`status ${res.statusCode}`);
          return finishIfDone();
        }
        res.on('data', (chunk) => {
          if (!seenFirst) {
            seenFirst = true;
            ttft.push(performance.now() - start);
            open++;
            if (open > maxOpen) maxOpen = open;
          }
          tail = (tail + chunk.toString('latin1')).slice(-64);
        });
        res.on('error', () => {});
        // 'close' comes after 'end' on a clean finish and alone on a reset mid-stream.
        res.on('close', () => {
          if (finished || !requests.has(req)) return;
          requests.delete(req);
          if (seenFirst) open--;
          if (res.complete && tail.includes('[DONE]')) completed++;
          else fail(res.complete ? 'ended without [DONE]' : 'reset mid-stream');
          finishIfDone();
        });
      },
    );
    req.on('error', (err) => {
      if (finished || !requests.has(req)) return;
      requests.delete(req);
      if (seenFirst) open--;
      fail(err.code ?? err.message);
      finishIfDone();
    });
    requests.add(req);
    req.end(job.body);
  }

  // Open streams in small bursts every 10 ms to hold the requested rate.
  const perTick = Math.max(1, Math.round(job.ratePerS / 100));
  const ramp = setInterval(() => {
    for (let i = 0; i < perTick && started < job.count; i++) openOne();
    if (started >= job.count) clearInterval(ramp);
  }, 10);
});
