#!/usr/bin/env node
// mediagate benchmarks, side by side with a raw Node proxy, nginx and Portkey's gateway, in one run on
// one machine. `npm run bench` (full, about twenty-three minutes) or `npm run bench:smoke` (about a
// minute; proves the harness end to end with small counts). See docs/benchmarks.md; the flags:
// `node bench/run.mjs --help` (bench/lib/args.mjs).
import { fetch } from 'undici';
import { performance } from 'node:perf_hooks';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { spawnSync } from 'node:child_process';
import { startServer, killAll } from './lib/children.mjs';
import { writeConfig, createKey, createProject, startMediagate, reloadWatch, CHAT_MODEL, HOLD_MODEL, VIDEO_MODEL } from './lib/mediagate.mjs';
import { chatPhase } from './phases/chat.mjs';
import { streamsPhase } from './phases/streams.mjs';
import { modelsPhase, taskReadsPhase, seedBoth } from './phases/reads.mjs';
import { pollerPhase } from './phases/poller.mjs';
import { scalePhase } from './phases/scale.mjs';
import { listPhase } from './phases/list.mjs';
import { machine, versions, checkTargets, renderMarkdown, updateDoc } from './lib/report.mjs';
import { summarizeProfile } from './lib/profile-summary.mjs';
import { ensureBuilt } from '../bin/ensure-built.mjs';
import { parseBenchArgs, USAGE } from './lib/args.mjs';
import { withIds } from './lib/fresh-ids.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
let flags;
try {
  flags = parseBenchArgs(process.argv.slice(2));
} catch (err) {
  process.stderr.write(`bench: ${err.message}\n\n${USAGE}`);
  process.exit(2);
}
if (flags.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}
const { smoke, profile, only, baselineRoot } = flags;
const runs = (phase) => !only || only.includes(phase);

// Sizes of each mode. The full run takes about twenty-three minutes on two cores.
const P = smoke
  ? {
      mode: 'smoke',
      // No separate warm-up: the check requests and the first second of load warm the JIT.
      load: { rounds: 1, warmS: 0, measureS: 2, connections: 50 },
      chatRounds: 1,
      latency: { rounds: 2, sliceMs: 300, warmupMs: 200 },
      streams: { count: 200, ratePerS: 400, holdMs: 1500, intervalMs: 500, pauseMs: 300 },
      tasks: { small: 1000, large: 20_000 },
      poller: { open: 200, idleS: 2, windowS: 3 },
      // Polls sooner than the default 5 s, so the smoke sees the poller work within its minute.
      tasksConfig: { poll_interval_ms: 1000 },
    }
  : {
      mode: 'full',
      load: { rounds: 3, warmS: 2, measureS: 8, connections: 100 },
      // Chat takes more rounds: its judged CPU ratios (tracing, budgets, idempotency against the
      // same key without) are medians of the rounds' ratios, and three rounds on two shared cores
      // leave one outlying pair deciding them.
      chatRounds: 5,
      latency: { rounds: 5, sliceMs: 1000, warmupMs: 1000 },
      streams: { count: 2000, ratePerS: 500, holdMs: 8000, intervalMs: 1000, pauseMs: 2000, rounds: 3 },
      tasks: { small: 1000, large: 1_000_000 },
      poller: { open: 10_000, idleS: 10, windowS: 20 },
      // The poller runs with the defaults of the config schema.
      tasksConfig: null,
    };

const t0 = performance.now();
function log(msg) {
  process.stderr.write(`[bench ${((performance.now() - t0) / 1000).toFixed(0).padStart(3)}s] ${msg}\n`);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function request(url, init) {
  const res = await fetch(url, init);
  const text = await res.text();
  return { status: res.status, text, json: () => JSON.parse(text) };
}

/** A non-streamed chat completion must come back whole through every path before it is timed. */
async function checkChat(name, t) {
  const r = await request(t.url + t.path, { method: 'POST', headers: withIds(t), body: t.body });
  if (r.status !== 200 || !Array.isArray(r.json().choices)) throw new Error(`${name}: chat check answered ${r.status}: ${r.text.slice(0, 300)}`);
}

/** The nginx version the bench ran (`nginx -v` prints it on stderr). */
function nginxVersion() {
  const out = spawnSync('/usr/sbin/nginx', ['-v'], { encoding: 'utf8' });
  return /nginx\/(\S+)/.exec(out.stderr ?? '')?.[1] ?? null;
}

async function waitForTask(mg, auth, id, status, deadlineMs) {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const r = await request(`${mg.url}/v1/video/generations/${id}`, { headers: auth });
    if (r.status === 200 && r.json().data.status === status) return;
    if (Date.now() > until) throw new Error(`task ${id} did not reach ${status}: ${r.status} ${r.text.slice(0, 300)}`);
    await sleep(500);
  }
}

async function main() {
  log(`mode: ${P.mode}${only ? ` (only ${only.join(',')})` : ''}${profile ? ', profiling mediagate' : ''}`);
  ensureBuilt(root, log);
  const tmp = mkdtempSync(join(tmpdir(), 'mediagate-bench-'));
  const ctx = { P, root, tmp, stopLater: [], baselineRoot: baselineRoot ? resolve(baselineRoot) : undefined };
  const results = { meta: { mode: P.mode, date: new Date().toISOString(), params: P, machine: machine(), versions: versions(root), command: smoke ? 'npm run bench:smoke' : 'npm run bench' } };
  try {
    // --- servers, each in its own process ------------------------------------------------------
    const up = await startServer('upstream', [join(root, 'bench/servers/upstream.mjs'), '--hold-ms', String(P.streams.holdMs), '--interval-ms', String(P.streams.intervalMs)], {
      ready: /^LISTENING (\S+) (\S+)/m,
    });
    results.meta.upstreamChat = /LISTENING \S+ (\S+)/.exec(up.output())[1];
    const raw = await startServer('raw-proxy', [join(root, 'bench/servers/raw-proxy.mjs'), up.url]);
    const nginx = await startServer('nginx', [join(root, 'bench/servers/nginx.mjs'), up.url, join(tmp, 'nginx')], { ready: /^LISTENING (\S+) (\S+)/m, timeoutMs: 300_000 });
    const nginxPids = /LISTENING \S+ (\S+)/.exec(nginx.output())[1].split(',').map(Number);
    const portkeyArgs = ['--import', join(root, 'bench/servers/loopback-port0.mjs'), join(root, 'node_modules/@portkey-ai/gateway/build/start-server.js'), '--headless'];
    const portkey = await startServer('portkey', portkeyArgs);
    const configPath = await writeConfig(tmp, up.url, root, P.tasksConfig ? { tasks: P.tasksConfig } : {});
    const { ConfigSchema } = await import(join(root, 'dist/config/schema.js'));
    const taskDefaults = ConfigSchema.properties.tasks.properties;
    ctx.pollIntervalMs = P.tasksConfig?.poll_interval_ms ?? taskDefaults.poll_interval_ms.default;
    ctx.tickMs = taskDefaults.tick_ms.default;
    ctx.batch = taskDefaults.batch.default;
    const key = createKey(root, configPath).key;
    const unlimitedKey = createKey(root, configPath, { unlimited: true }).key;
    createProject(root, configPath, 'bench-project');
    const budgetedKey = createKey(root, configPath, { project: 'bench-project' }).key;
    const profDir = join(tmp, 'profile');
    const mg = await startMediagate(root, configPath, { nodeArgs: profile ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : [] });
    // Tracing's cost: the same gateway (same process, database and key) with its telemetry section
    // switched on by a config reload before each of these targets' turns and off again after it,
    // exporting to a local OTLP receiver: a parent-based 10% sampler, and every request sampled.
    const traced = {};
    if (!flags.targets || flags.targets.some((t) => t.startsWith('traced'))) {
      const sink = await startServer('otlp-sink', [join(root, 'bench/servers/otlp-sink.mjs')]);
      ctx.stopLater.push(sink);
      const reloads = reloadWatch(mg);
      const plainConfig = readFileSync(configPath, 'utf8');
      const withTelemetry = (telemetry) => reloads.reload(configPath, telemetry ? JSON.stringify({ ...JSON.parse(plainConfig), telemetry }, null, 2) : plainConfig);
      const switched = (sampler, arg) => ({
        before: () => withTelemetry({ enabled: true, endpoint: sink.url, sampler, sampler_arg: arg }),
        after: async () => {
          await withTelemetry(null);
        },
      });
      traced.traced10 = switched('parentbased_traceidratio', 0.1);
      traced.traced100 = switched('always_on', 1);
    }
    Object.assign(ctx, { up, raw, portkey, mg, key, configPath, dbPath: join(tmp, 'mediagate.db') });
    results.meta.nginx = nginxVersion();
    log(`upstream ${up.url} (${results.meta.upstreamChat}), raw proxy ${raw.url}, nginx ${nginx.url}, portkey ${portkey.url}, mediagate ${mg.url}`);

    const auth = { authorization: `Bearer ${key}` };
    const upstreamAuth = { authorization: 'Bearer sk-bench-upstream' };
    const json = { 'content-type': 'application/json' };
    const messages = [{ role: 'user', content: 'Say hello in one short sentence.' }];
    ctx.auth = auth;
    ctx.bodies = {
      chat: JSON.stringify({ model: CHAT_MODEL, messages }),
      stream: JSON.stringify({ model: CHAT_MODEL, messages, stream: true, stream_options: { include_usage: true } }),
      hold: JSON.stringify({ model: HOLD_MODEL, messages, stream: true, stream_options: { include_usage: true } }),
    };
    const portkeyHeaders = { ...upstreamAuth, ...json, 'x-portkey-provider': 'openai', 'x-portkey-custom-host': `${up.url}/v1` };
    const route = (url, headers) => ({ url, path: '/v1/chat/completions', method: 'POST', headers, body: ctx.bodies.chat });
    ctx.chatTargets = {
      direct: { ...route(up.url, { ...upstreamAuth, ...json }), pid: up.pid },
      raw: { ...route(raw.url, { ...upstreamAuth, ...json }), pid: raw.pid },
      // One worker process does the proxying; the master's CPU counts too.
      nginx: { ...route(nginx.url, { ...upstreamAuth, ...json }), pids: nginxPids },
      portkey: { ...route(portkey.url, portkeyHeaders), pid: portkey.pid },
      mediagate: { ...route(mg.url, { ...auth, ...json }), pid: mg.pid },
      // The same gateway with a key that has no rpm, concurrency or credit limit.
      unlimited: { ...route(mg.url, { authorization: `Bearer ${unlimitedKey}`, ...json }), pid: mg.pid },
      // Credit-limited chat with tracing on (10% parent-based, then always on), for its CPU cost.
      ...Object.fromEntries(Object.entries(traced).map(([name, hooks]) => [name, { ...route(mg.url, { ...auth, ...json }), pid: mg.pid, ...hooks }])),
      // The credit-limited key again, in a project with a month budget: what budgets cost per request.
      budgeted: { ...route(mg.url, { authorization: `Bearer ${budgetedKey}`, ...json }), pid: mg.pid },
      // The credit-limited key again, each request with a new Idempotency-Key ([<id>] is replaced
      // per request): what claiming and keeping every answer costs next to the `mediagate` row.
      idempotent: { ...route(mg.url, { ...auth, ...json, 'idempotency-key': '[<id>]' }), ids: true, pid: mg.pid },
    };
    // --targets=raw,mediagate (development): only these chat targets (the direct one always, for added latency).
    if (flags.targets) for (const name of Object.keys(ctx.chatTargets)) if (name !== 'direct' && !flags.targets.includes(name)) delete ctx.chatTargets[name];
    for (const [name, t] of Object.entries(ctx.chatTargets)) await checkChat(name, t);

    // Two tasks created through the API now, so the poller has moved them on when the task phases
    // start: one that finishes (cloned for the reads) and one that runs forever (cloned as open tasks).
    const createTask = async (prompt) => {
      const r = await request(`${mg.url}/v1/video/generations`, {
        method: 'POST',
        headers: { ...auth, ...json },
        body: JSON.stringify({ model: VIDEO_MODEL, prompt, duration: 5, resolution: '720p', ratio: '16:9' }),
      });
      if (r.status !== 200) throw new Error(`creating a task answered ${r.status}: ${r.text.slice(0, 300)}`);
      return r.json().data.task_id;
    };
    let templateId = null;
    if (runs('tasks') || runs('list') || runs('poller')) {
      templateId = await createTask('a corgi runs on grass');
      ctx.openTemplateId = await createTask('[stuck] a corgi runs on grass');
    }

    // --- phases ----------------------------------------------------------------------------------
    if (runs('chat')) {
      log('chat: non-streamed req/s and latency through each proxy');
      results.chat = await chatPhase(ctx);
    }
    if (runs('convert')) results.convert = await (await import('./phases/convert.mjs')).convertPhase(ctx, log); // pass-through vs converted chat paths
    if (runs('streams')) {
      log('streams: time to first token and concurrent streams held');
      // Portkey as npm installs it, streamed: recorded, because it fails (see docs/benchmarks.md).
      // --targets: only the chosen ones (the direct path always).
      const withPortkey = Boolean(ctx.chatTargets.portkey);
      let portkeyStreams = null;
      if (withPortkey) {
        const vanilla = await request(ctx.chatTargets.portkey.url + '/v1/chat/completions', { method: 'POST', headers: ctx.chatTargets.portkey.headers, body: ctx.bodies.stream });
        results.meta.portkeyAsInstalledStream = { status: vanilla.status, ok: vanilla.status === 200 && vanilla.text.includes('[DONE]'), body: vanilla.text.slice(0, 120) };
        portkeyStreams = await startServer('portkey-streams', portkeyArgs, { env: { BENCH_NATIVE_RESPONSE: '1' } });
      }
      const streamTargets = {
        direct: { ...ctx.chatTargets.direct },
        raw: ctx.chatTargets.raw && { ...ctx.chatTargets.raw },
        portkey: portkeyStreams && { ...ctx.chatTargets.portkey, url: portkeyStreams.url },
        mediagate: ctx.chatTargets.mediagate && { ...ctx.chatTargets.mediagate },
      };
      ctx.streamTargets = Object.fromEntries(Object.entries(streamTargets).filter(([, t]) => t));
      ctx.pids = { direct: up.pid, raw: raw.pid, portkey: portkeyStreams?.pid, mediagate: mg.pid };
      try {
        results.streams = await streamsPhase(ctx);
      } finally {
        await portkeyStreams?.stop();
      }
    }
    if (runs('models')) {
      log('models: GET /v1/models beside raw node:http');
      results.models = await modelsPhase(ctx);
    }
    if (runs('scale')) {
      log('scale: one and two instances on PostgreSQL + Redis behind a loopback balancer');
      results.scale = await scalePhase(ctx);
    }
    if (runs('tasks') || runs('list') || runs('poller')) {
      log('tasks: waiting for the template task to finish');
      await waitForTask(mg, auth, templateId, 'SUCCESS', 60_000);
      // The large database starts as a copy of the small one (same key, same template task).
      const { default: Database } = await import('better-sqlite3');
      ctx.dbLargePath = join(tmp, 'mediagate-large.db');
      const db = new Database(ctx.dbPath);
      db.pragma('busy_timeout = 30000');
      db.prepare('VACUUM INTO ?').run(ctx.dbLargePath);
      db.close();
      log(`tasks: seeding ${P.tasks.small.toLocaleString('en')} and ${P.tasks.large.toLocaleString('en')} tasks`);
      ctx.seeding = seedBoth(ctx, templateId);
      log(`tasks: seeded in ${ctx.seeding.small.seconds.toFixed(1)} s and ${ctx.seeding.large.seconds.toFixed(1)} s`);
      const largeConfig = join(tmp, 'mediagate-large.json');
      const cfg = JSON.parse(readFileSync(configPath, 'utf8'));
      cfg.database.url = `sqlite:${ctx.dbLargePath}`;
      writeFileSync(largeConfig, JSON.stringify(cfg, null, 2));
      // Profiled too (the poller phase runs on this one): its own profile, summarised apart.
      ctx.mgLarge = await startMediagate(root, largeConfig, { nodeArgs: profile ? ['--cpu-prof', `--cpu-prof-dir=${join(profDir, 'large')}`] : [] });
      ctx.stopLater.push(ctx.mgLarge);
    }
    if (runs('tasks')) {
      log('tasks: task reads beside raw node:http, 1k vs large table');
      results.tasks = await taskReadsPhase(ctx);
    }
    if (runs('list')) {
      log('list: task list pages, 1k vs large table');
      results.list = await listPhase(ctx);
    }
    if (runs('poller')) {
      log(`poller: CPU with ${P.poller.open.toLocaleString('en')} open tasks`);
      results.poller = await pollerPhase(ctx);
    }

    const mgPeak = readFileSync(`/proc/${mg.pid}/status`, 'utf8').match(/^VmHWM:\s+(\d+)/m);
    results.meta.mediagatePeakRssMb = mgPeak ? Math.round(Number(mgPeak[1]) / 1024) : null;
    for (const s of [...ctx.stopLater, mg, portkey, nginx, raw, up]) await s.stop();
    if (profile) {
      const summarize = (dir, tag) => {
        const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
        if (!file) return null;
        const summary = summarizeProfile(join(dir, file), 25);
        // Kept past the temp dir for a closer look (node bench/lib/profile-summary.mjs <file> 25 --callers=writev).
        summary.file = join(tmpdir(), `mediagate-bench-${tag}${Date.now()}.cpuprofile`);
        copyFileSync(join(dir, file), summary.file);
        return summary;
      };
      results.profile = summarize(profDir, '');
      // The large-table gateway (task reads, list, poller phases), when it ran.
      if (ctx.mgLarge) results.profileLarge = summarize(join(profDir, 'large'), 'large-');
    }
  } finally {
    killAll();
    rmSync(tmp, { recursive: true, force: true });
  }

  results.targets = checkTargets(results);
  results.meta.elapsedS = Math.round((performance.now() - t0) / 1000);
  const md = renderMarkdown(results);
  mkdirSync(join(root, 'bench/results'), { recursive: true });
  const name = smoke ? 'smoke' : only || profile ? 'partial' : 'latest';
  writeFileSync(join(root, `bench/results/${name}.json`), JSON.stringify(results, null, 2) + '\n');
  writeFileSync(join(root, `bench/results/${name}.md`), md);
  if (name === 'latest') updateDoc(join(root, 'docs/benchmarks.md'), md);
  process.stdout.write(md + '\n');
  for (const [label, prof] of [['mediagate', results.profile], ['mediagate (large-table gateway)', results.profileLarge]]) {
    if (!prof) continue;
    process.stdout.write(`\n${label} CPU profile (${prof.totalMs} ms busy time sampled, ${prof.file}), top self time:\n`);
    for (const f of prof.functions) process.stdout.write(`${String(f.pct).padStart(5)}%  ${f.name}\n`);
    process.stdout.write('\nby module:\n');
    for (const m of prof.modules) process.stdout.write(`${String(m.pct).padStart(5)}%  ${m.name}\n`);
  }
  log(`done in ${results.meta.elapsedS} s; results in bench/results/${name}.json`);
  const broken = harnessProblems(results);
  if (broken.length) {
    process.stderr.write(`\nThe harness did not work end to end:\n${broken.map((b) => `  - ${b}`).join('\n')}\n`);
    process.exitCode = 1;
  }
}

/**
 * What makes a run unusable, as opposed to a missed target: a failed request or stream on the
 * reference paths (upstream direct, raw proxy), a non-2xx answer from mediagate under plain load
 * (a broken bench config or key), a missing figure. Streams mediagate or Portkey could not hold
 * are results: the tables and targets show them.
 */
function harnessProblems(r) {
  const out = [];
  const finite = (x, what) => {
    if (!Number.isFinite(x)) out.push(`${what} is not a number`);
  };
  for (const [phase, load] of [['chat', r.chat?.load], ['models', r.models?.load], ['tasks', r.tasks?.load], ['scale', r.scale?.load]]) {
    for (const [name, x] of Object.entries(load ?? {})) {
      if (x.failures && name !== 'portkey') out.push(`${phase}/${name}: ${x.failures} failed requests`);
      finite(x.rps, `${phase}/${name} req/s`);
    }
  }
  for (const name of ['direct', 'raw']) {
    const x = r.streams?.held?.[name];
    if (x?.failed) out.push(`streams/${name}: ${x.failed} streams failed ${JSON.stringify(x.failures)}`);
  }
  return out;
}

process.on('SIGINT', () => {
  killAll();
  process.exit(130);
});
main().catch((err) => {
  killAll();
  process.stderr.write(`bench failed: ${err?.stack ?? err}\n`);
  process.exit(1);
});
