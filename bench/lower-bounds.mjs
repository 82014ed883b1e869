#!/usr/bin/env node
// What two features cost at the least, apart from any request: the floor under what the chat
// phase measures for tracing and for Idempotency-Key (docs/benchmarks.md, "Lower bounds").
//
// 1. Tracing: the gateway's own span code (src/telemetry) for one chat request — server span,
//    credit hold, the upstream attempt with its GenAI attributes, credit settle — exported by the
//    OpenTelemetry SDK (batch processor, OTLP http/protobuf) to a local receiver in another process,
//    paced at a steady rate; once with every request sampled, once with none.
// 2. Idempotency-Key on SQLite: kept answers written through the store's background worker in
//    batches, as the usage ledger writes them, into a table filled to 100,000 rows; beside it the
//    usage row every request writes anyway, and the read a new key costs.
//
// Figures are CPU time of this process (all its threads) per request or row, less the same loop
// doing nothing. Usage: npm run build && node bench/lower-bounds.mjs
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { randomUUID } from 'node:crypto';
import { startServer, killAll } from './lib/children.mjs';
import { ensureBuilt } from '../bin/ensure-built.mjs';

const root = new URL('..', import.meta.url).pathname;
ensureBuilt(root);
const dist = (p) => import(join(root, 'dist', p));
const { validateConfig } = await dist('config-file/loader.js');
const { startSdk } = await dist('telemetry/sdk.js');
const { startServerSpan, endServerSpan, inSpan } = await dist('telemetry/trace.js');
const { startAttempt, endAttempt } = await dist('telemetry/genai.js');
const { openStore } = await dist('store/db.js');
const { IdempotencyRepo } = await dist('store/repos/idempotency.js');
const { UsageRepo } = await dist('store/repos/usage.js');

const cpuUs = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Runs `fn` `perTick` times every 10 ms until `total` calls; CPU µs per call. */
async function paced(total, perTick, fn) {
  const c0 = cpuUs();
  for (let done = 0; done < total; ) {
    const tick = sleep(10);
    for (let i = 0; i < perTick && done < total; i++, done++) await fn(done);
    await tick;
  }
  return (cpuUs() - c0) / total;
}

// ---- 1. tracing ----
const channel = { name: 'bench', type: 'openai' };
const target = { channel, baseUrl: 'http://127.0.0.1:9000/v1' };
async function chatSpans() {
  const request = {
    method: 'POST',
    url: '/v1/chat/completions',
    headers: { host: '127.0.0.1:8080', 'user-agent': 'bench', 'content-type': 'application/json' },
    protocol: 'http',
    route: { url: '/v1/chat/completions' },
    principal: { keyId: 'key_bench' },
    trace: null,
  };
  startServerSpan(request);
  await inSpan(request.trace, 'credit.hold', { attributes: { 'mediagate.key_id': 'key_bench', 'mediagate.credit.hold_usd': 0.001 } }, async () => {});
  const attempt = startAttempt(request.trace, 'chat', 'gpt-4o-mini', target, 1, 'key_bench');
  endAttempt(attempt, 'chat', { status: 200, input: 12, output: 34, costMicros: 31, responseModel: 'gpt-4o-mini', finishReasons: ['stop'] });
  await inSpan(request.trace, 'credit.settle', { attributes: { 'mediagate.cost_usd': 0.000031 } }, async (span) => span?.setAttribute('mediagate.credit.charged_usd', 0.000031));
  endServerSpan(request, 200, true);
}

/** Runs `fn` `total` times back to back; CPU µs per call. */
async function tight(total, fn) {
  const c0 = cpuUs();
  for (let i = 0; i < total; i++) await fn(i);
  return (cpuUs() - c0) / total;
}

/**
 * CPU µs per request with `sampler`, less the same loop with tracing off. Sampled requests are
 * paced (20 every 10 ms), so the batch processor exports them all rather than dropping some; the
 * rest run back to back.
 */
async function tracingCost(sink, sampler, n) {
  const loop = sampler === 'always_on' ? (fn) => paced(n, 20, fn) : (fn) => tight(n, fn);
  await loop(chatSpans); // warm-up
  const off = await loop(chatSpans);
  const settings = validateConfig({ telemetry: { enabled: true, endpoint: sink, sampler, export_interval_ms: 1000, metrics: false } }, 'bench').telemetry;
  const sdk = await startSdk(settings, null, {});
  await loop(chatSpans); // warm-up
  const on = await loop(chatSpans);
  await sdk.shutdown();
  return on - off;
}

// ---- 2. kept answers ----
const answer = {
  status: 200,
  headers: { 'content-type': 'application/json', 'x-request-id': randomUUID(), 'mediagate-cost-usd': '0.000031' },
  body: Buffer.from(JSON.stringify({ id: `chatcmpl-${randomUUID()}`, object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'x'.repeat(240) }, finish_reason: 'stop' }], usage: { prompt_tokens: 12, completion_tokens: 34, total_tokens: 46 } })),
};
const usageRow = (i) => ({ key_id: 'key_bench', model: 'gpt-4o-mini', channel: 'bench', endpoint: 'chat', status: 200, input_units: 12, output_units: 34, cost_micros: 31, overage_micros: 0, latency_ms: 3, created_at: Date.now() + i, billed_by: '', error: '' });

async function storeCost(dir, rows, batch) {
  const store = await openStore(`sqlite:${join(dir, 'bounds.db')}`);
  const repo = new IdempotencyRepo(store.db, { readRaw: store.readRaw });
  const usage = new UsageRepo(store.db, store.withoutLockWait, store.writeBatch);
  const now = Date.now();
  const kept = (i) => repo.keepStatement({ keyId: 'key_bench', idemKey: randomUUID(), fingerprint: randomUUID().repeat(2).slice(0, 64), owner: randomUUID(), answer, createdAt: now, expiresAt: now + 86_400_000 + i });
  // Each figure less the same loop building its rows (or keys) without writing (or reading) them.
  const addKept = (i, list) => list.push(kept(i));
  const addUsage = (i, list) => list.push(usageRow(i));
  const keptUs = (await measureBatches(rows, batch, addKept, (list) => store.writeBatch(list))) - (await measureBatches(rows, batch, addKept));
  const usageUs = (await measureBatches(rows, batch, addUsage, (list) => usage.insertMany(list))) - (await measureBatches(rows, batch, addUsage));
  const reads = 20_000;
  const readsOf = async (read) => {
    const c0 = cpuUs();
    for (let i = 0; i < reads; i++) await read(randomUUID());
    return (cpuUs() - c0) / reads;
  };
  const findUs = (await readsOf((idemKey) => repo.find('key_bench', idemKey))) - (await readsOf(async () => {}));
  await store.close();
  return { keptUs, usageUs, findUs };
}

/** Builds `rows` items in batches of `batch` and writes each batch with `write`; CPU µs per row. */
async function measureBatches(rows, batch, add, write = async () => {}) {
  const c0 = cpuUs();
  for (let at = 0; at < rows; at += batch) {
    const list = [];
    for (let i = at; i < Math.min(rows, at + batch); i++) add(i, list);
    await write(list);
  }
  return (cpuUs() - c0) / rows;
}

const tmp = mkdtempSync(join(tmpdir(), 'mediagate-bounds-'));
try {
  const sink = await startServer('otlp-sink', [join(root, 'bench/servers/otlp-sink.mjs')]);
  const unsampled = await tracingCost(sink.url, 'always_off', 500_000);
  const sampled = await tracingCost(sink.url, 'always_on', 20_000);
  await sink.stop();
  const kept = await storeCost(tmp, 100_000, 700);
  const fmt = (x) => x.toFixed(1);
  process.stdout.write(
    [
      '| what | CPU µs |',
      '|---|---:|',
      `| one chat request's spans, sampled and exported (OTLP http/protobuf) | ${fmt(sampled)} |`,
      `| the same request, not sampled | ${fmt(unsampled)} |`,
      `| a kept Idempotency-Key answer written (SQLite worker, batches of 700, table filled to 100,000 rows) | ${fmt(kept.keptUs)} |`,
      `| the usage row every request writes, the same way | ${fmt(kept.usageUs)} |`,
      `| the read of a new Idempotency-Key | ${fmt(kept.findUs)} |`,
      '',
    ].join('\n'),
  );
} finally {
  killAll();
  rmSync(tmp, { recursive: true, force: true });
}
