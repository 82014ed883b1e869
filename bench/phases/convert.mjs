// Chat format conversion: the same non-streamed chat request through the pass-through path (the
// client's format is the channel's: one parse, one stringify, the answer back byte for byte) and
// through the converted path (client codec → hub → upstream codec, and back), side by side on one
// gateway process. The gateway's CPU time per request isolates what conversion adds (the upstream's
// own work differs by route and is not counted); req/s and p50 one request at a time are shown too.
// On its own:
//   node bench/run.mjs --only=convert
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fetch } from 'undici';
import { throughput, latency } from '../lib/measure.mjs';
import { createKey, startMediagate, CHAT_MODEL } from '../lib/mediagate.mjs';

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

export async function convertPhase(ctx, log = () => {}) {
  const { P, root } = ctx;
  const configPath = convertConfig(ctx);
  const { key } = createKey(root, configPath);
  const mg = await startMediagate(root, configPath);
  try {
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const targets = {};
    for (const p of PATHS) {
      const { path, body } = CLIENT[p.client](p.model);
      targets[p.name] = { url: mg.url, path, method: 'POST', headers, body: JSON.stringify(body), pid: mg.pid };
      // Every path must answer whole before it is timed.
      const res = await fetch(mg.url + path, { method: 'POST', headers, body: JSON.stringify(body) });
      const text = await res.text();
      if (res.status !== 200 || !text.includes('You said')) throw new Error(`convert ${p.name}: answered ${res.status}: ${text.slice(0, 300)}`);
    }
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
    return { paths, summary };
  } finally {
    await mg.stop();
  }
}
