// Chat format conversion: the same non-streamed chat request through the pass-through path (the
// client's format is the channel's: one parse, one stringify, the answer back byte for byte) and
// through the converted path (client codec → hub → upstream codec, and back), side by side on one
// gateway process. The gateway's CPU time per request isolates what conversion adds (the upstream's
// own work differs by route and is not counted); req/s and p50 one request at a time are shown too.
// On its own:
//   node bench/run.mjs --only=convert
// With `--baseline-root=<dir>` (or MEDIAGATE_BENCH_BASELINE_ROOT=<dir>), a second gateway built from
// another checkout (e.g. the last commit before the chat hub) answers the pass-through paths it has
// too, in the same rounds, so both builds meet the same outside load:
//   git worktree add --detach /tmp/prehub 3e6fdcb^ && ln -s "$PWD/node_modules" /tmp/prehub/
//   node bench/run.mjs --only=convert --baseline-root=/tmp/prehub
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { fetch } from 'undici';
import { throughput, latency } from '../lib/measure.mjs';
import { createKey, startMediagate, CHAT_MODEL } from '../lib/mediagate.mjs';
import { ensureBuilt } from '../../bin/ensure-built.mjs';

const PROMPT = 'Say hello in one short sentence.';

/** Each client format's request for `model`: path and body. */
const CLIENT = {
  openai: (model) => ({ path: '/v1/chat/completions', body: { model, messages: [{ role: 'user', content: PROMPT }] } }),
  anthropic: (model) => ({ path: '/v1/messages', body: { model, max_tokens: 256, messages: [{ role: 'user', content: PROMPT }] } }),
  // The Responses API always goes through the hub (the gateway keeps its state); store: false keeps
  // the database out of the comparison.
  responses: (model) => ({ path: '/v1/responses', body: { model, input: PROMPT, store: false } }),
  gemini: (model) => ({ path: `/v1beta/models/${model}:generateContent`, body: { contents: [{ role: 'user', parts: [{ text: PROMPT }] }] } }),
};

/**
 * Client format → model, and which upstream format answers it: `bench-chat` sits on the bench's
 * openai channel, `sim-claude` / `sim-chat` on its simulator channel (which speaks the client's own
 * format), and `conv-<format>` on a simulator channel told to speak that format.
 */
const PATHS = [
  { name: 'openai→openai', client: 'openai', model: CHAT_MODEL, pass: true },
  { name: 'anthropic→anthropic', client: 'anthropic', model: 'sim-claude', pass: true },
  { name: 'gemini→gemini', client: 'gemini', model: 'sim-chat', pass: true },
  { name: 'anthropic→openai', client: 'anthropic', model: CHAT_MODEL, pass: false },
  { name: 'gemini→openai', client: 'gemini', model: CHAT_MODEL, pass: false },
  { name: 'responses→openai', client: 'responses', model: CHAT_MODEL, pass: false },
  { name: 'openai→anthropic', client: 'openai', model: 'conv-anthropic', pass: false },
  { name: 'openai→gemini', client: 'openai', model: 'conv-gemini', pass: false },
];

/** The bench config plus one simulator channel per converted upstream format, on its own database. */
function convertConfig(ctx) {
  const cfg = JSON.parse(readFileSync(ctx.configPath, 'utf8'));
  cfg.database.url = `sqlite:${join(ctx.tmp, 'mediagate-convert.db')}`;
  for (const f of ['anthropic', 'gemini']) {
    cfg.models[`conv-${f}`] = { ...cfg.models[CHAT_MODEL] };
    cfg.channels.push({ name: `bench-conv-${f}`, type: 'simulator', upstream_format: f, base_url: ctx.up.url, api_key: 'sim-bench-upstream', models: [`conv-${f}`] });
  }
  const path = join(ctx.tmp, 'mediagate-convert.json');
  writeFileSync(path, JSON.stringify(cfg, null, 2));
  return path;
}

/** The pass-through paths a build from before the chat hub has too. */
const BASELINE_PATHS = ['openai→openai', 'anthropic→anthropic'];
const BASELINE = (name) => `baseline ${name}`;

/**
 * The bench config cut down to what an older build accepts (its schema refuses unknown fields): the
 * channels and models of the baseline's timed paths, as the current gateway has them, on its own
 * database; a simulator model as that build's own catalogue defines it (same price, without fields
 * added since). `server.max_connections_per_client` goes (builds without it have no such cap, and
 * the bench turns it off anyway).
 */
async function baselineConfig(ctx, baselineRoot) {
  const cfg = JSON.parse(readFileSync(ctx.configPath, 'utf8'));
  // The embedded default moved from config/ to config-file/; a baseline build may have either.
  const defaultsFile = ['dist/config-file/defaults.js', 'dist/config/defaults.js'].map((f) => join(baselineRoot, f)).find((f) => existsSync(f));
  const { SIMULATOR_MODELS = {} } = defaultsFile ? await import(defaultsFile) : {};
  const models = [...new Set(PATHS.filter((p) => BASELINE_PATHS.includes(p.name)).map((p) => p.model))];
  const { max_connections_per_client: _cap, ...server } = cfg.server;
  const out = {
    server,
    database: { url: `sqlite:${join(ctx.tmp, 'mediagate-baseline.db')}` },
    channels: cfg.channels
      .filter((ch) => ch.models.some((m) => models.includes(m)))
      .map((ch) => ({ ...ch, models: ch.models.filter((m) => models.includes(m)) })),
    models: Object.fromEntries(models.map((m) => [m, SIMULATOR_MODELS[m] ?? cfg.models[m]])),
  };
  const path = join(ctx.tmp, 'mediagate-baseline.json');
  writeFileSync(path, JSON.stringify(out, null, 2));
  return path;
}

/** Every path must answer whole before it is timed. */
async function check(name, t) {
  const res = await fetch(t.url + t.path, { method: t.method, headers: t.headers, body: t.body });
  const text = await res.text();
  if (res.status !== 200 || !text.includes('You said')) throw new Error(`convert ${name}: answered ${res.status}: ${text.slice(0, 300)}`);
}

function target(mg, key, p) {
  const { path, body } = CLIENT[p.client](p.model);
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  return { url: mg.url, path, method: 'POST', headers, body: JSON.stringify(body), pid: mg.pid };
}

function gitDescribe(root) {
  try {
    return execFileSync('git', ['-C', root, 'log', '-1', '--format=%h %s'], { encoding: 'utf8' }).trim();
  } catch {
    return null;
  }
}

export async function convertPhase(ctx, log = () => {}) {
  const { P, root } = ctx;
  const baselineRoot = ctx.baselineRoot ?? process.env.MEDIAGATE_BENCH_BASELINE_ROOT ?? null;
  const configPath = convertConfig(ctx);
  const { key } = createKey(root, configPath);
  const mg = await startMediagate(root, configPath);
  let base = null;
  try {
    let baseKey = null;
    if (baselineRoot) {
      ensureBuilt(baselineRoot, (m) => log(`convert: baseline ${baselineRoot}: ${m}`));
      const baseConfig = await baselineConfig(ctx, baselineRoot);
      baseKey = createKey(baselineRoot, baseConfig).key;
      base = await startMediagate(baselineRoot, baseConfig);
      log(`convert: baseline gateway from ${baselineRoot} (${gitDescribe(baselineRoot)}) on ${base.url}`);
    }
    // Each baseline path right after the current one it compares with, so the two take turns.
    const targets = {};
    for (const p of PATHS) {
      targets[p.name] = target(mg, key, p);
      if (base && BASELINE_PATHS.includes(p.name)) targets[BASELINE(p.name)] = target(base, baseKey, p);
    }
    for (const [name, t] of Object.entries(targets)) await check(name, t);
    const load = await throughput(targets, P.load);
    const lat = await latency(targets, P.latency);
    const paths = {};
    const passCpu = Math.min(...PATHS.filter((p) => p.pass).map((p) => load[p.name].cpuMsPerReq));
    const passP50 = Math.min(...PATHS.filter((p) => p.pass).map((p) => lat[p.name].p50Ms));
    for (const p of PATHS) {
      paths[p.name] = {
        pass: p.pass,
        rps: load[p.name].rps,
        failures: load[p.name].failures,
        cpuMsPerReq: load[p.name].cpuMsPerReq,
        p50MsC1: lat[p.name].p50Ms,
        p99MsC1: lat[p.name].p99Ms,
      };
    }
    const converted = PATHS.filter((p) => !p.pass).map((p) => paths[p.name]);
    const summary = {
      passCpuMsPerReq: passCpu,
      addedCpuMsPerReq: converted.map((c) => c.cpuMsPerReq - passCpu),
      addedP50MsC1: converted.map((c) => c.p50MsC1 - passP50),
    };
    for (const [name, x] of Object.entries(paths)) {
      log(`convert: ${name.padEnd(20)} ${x.pass ? 'pass-through' : 'converted   '} ${String(x.rps).padStart(6)} req/s  ${x.cpuMsPerReq?.toFixed(3)} ms CPU/req  p50 ${x.p50MsC1.toFixed(3)} ms (c=1)${x.failures ? `  ${x.failures} failed` : ''}`);
    }
    let baseline = null;
    if (base) {
      baseline = { root: baselineRoot, commit: gitDescribe(baselineRoot), paths: {} };
      for (const name of BASELINE_PATHS) {
        const b = BASELINE(name);
        const x = { rps: load[b].rps, failures: load[b].failures, cpuMsPerReq: load[b].cpuMsPerReq, p50MsC1: lat[b].p50Ms, p99MsC1: lat[b].p99Ms };
        const cur = paths[name];
        // current / baseline: above 1 for req/s is faster now, above 1 for CPU and p50 is slower now.
        x.ratio = { rps: cur.rps / x.rps, cpuMsPerReq: cur.cpuMsPerReq / x.cpuMsPerReq, p50MsC1: cur.p50MsC1 / x.p50MsC1 };
        baseline.paths[name] = x;
        log(`convert: ${name.padEnd(20)} baseline     ${String(x.rps).padStart(6)} req/s  ${x.cpuMsPerReq?.toFixed(3)} ms CPU/req  p50 ${x.p50MsC1.toFixed(3)} ms (c=1)  now/baseline: req/s ${x.ratio.rps.toFixed(2)}, CPU ${x.ratio.cpuMsPerReq.toFixed(2)}, p50 ${x.ratio.p50MsC1.toFixed(2)}${x.failures ? `  ${x.failures} failed` : ''}`);
      }
    }
    return { paths, summary, baseline };
  } finally {
    await mg.stop();
    await base?.stop();
  }
}
