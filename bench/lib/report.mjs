// Turns a run's results into the markdown of docs/benchmarks.md: the machine, versions, one table
// per figure with its ratios, and the issue's targets met or missed.
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { cpus, totalmem, loadavg } from 'node:os';
import { execFileSync } from 'node:child_process';
import { pairedRatio } from './measure.mjs';

export function machine() {
  let model = cpus()[0]?.model ?? 'unknown';
  try {
    model = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? model;
  } catch {
    // not Linux
  }
  return { nproc: cpus().length, cpu: model, memGb: Math.round(totalmem() / 2 ** 30), node: process.version, loadAvgAtStart: loadavg().map((x) => Math.round(x * 100) / 100) };
}

export function versions(root) {
  const v = (pkg) => {
    try {
      return JSON.parse(readFileSync(join(root, 'node_modules', pkg, 'package.json'), 'utf8')).version;
    } catch {
      return null;
    }
  };
  let commit = null;
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
  } catch {
    // not a checkout
  }
  return {
    mediagate: JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version,
    commit,
    '@portkey-ai/gateway': v('@portkey-ai/gateway'),
    '@hono/node-server': v('@hono/node-server'),
    'find-my-way': v('find-my-way'),
    undici: v('undici'),
    'better-sqlite3': v('better-sqlite3'),
    autocannon: v('autocannon'),
  };
}

const f1 = (x) => (Number.isFinite(x) ? x.toFixed(1) : '—');
const f2 = (x) => (Number.isFinite(x) ? x.toFixed(2) : '—');
const f3 = (x) => (Number.isFinite(x) ? x.toFixed(3) : '—');
const int = (x) => (Number.isFinite(x) ? Math.round(x).toLocaleString('en') : '—');
const ratio = (a, b) => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? a / b : NaN);
const times1 = (x) => `${f1(x)}×`;
const times2 = (x) => `${f2(x)}×`;
const pct = (x) => (Number.isFinite(x) ? `${Math.round(x * 100)}%` : '—');
/** A paired ratio as the targets show it: the median, each round's ratio, and the ratio of best rounds. */
const pairedText = (p, best, f = pct) => `${f(p.median)} (rounds ${p.each.map(f).join(', ') || 'none to pair'}; best rounds ${f(best)})`;
const signed = (x, f = f3) => (Number.isFinite(x) ? (x >= 0 ? '+' : '') + f(x) : '—');

// The targets of issue 17 (Performance v2), each as a ratio taken side by side in one run.
export function checkTargets(r) {
  const out = [];
  const add = (target, measured, met) => out.push({ target, measured, met: met === null ? null : !!met });
  const chat = r.chat?.load;
  if (chat) {
    // Each ratio is the median of the rounds' own ratios (pairedRatio: the machine's speed drifts
    // between rounds); the ratio of the best rounds is shown beside it.
    const vsPortkey = pairedRatio(chat.mediagate, chat.portkey);
    const vsRaw = pairedRatio(chat.mediagate, chat.raw);
    add('Non-streamed chat (credit-limited key, rpm + concurrency limits, ledger on) req/s ≥ 10× Portkey', pairedText(vsPortkey, ratio(chat.mediagate?.rps, chat.portkey?.rps), times1), vsPortkey.median >= 10);
    add('Non-streamed chat (credit-limited key) req/s ≥ 1.2× the raw proxy', pairedText(vsRaw, ratio(chat.mediagate?.rps, chat.raw?.rps), times2), vsRaw.median >= 1.2);
    if (chat.nginx) {
      const x = pairedRatio(chat.mediagate, chat.nginx);
      add('Non-streamed chat (credit-limited key) req/s ≥ 55% of nginx (one worker, keep-alive upstream)', pairedText(x, ratio(chat.mediagate?.rps, chat.nginx.rps)), x.median >= 0.55);
    }
    if (chat.unlimited) {
      const x = pairedRatio(chat.unlimited, chat.raw);
      add('Non-streamed chat, unlimited key, req/s ≥ 80% of the raw proxy', pairedText(x, ratio(chat.unlimited.rps, chat.raw.rps)), x.median >= 0.8);
    }
    const added = r.chat.addedC1.mediagate?.p99Ms;
    add('Added latency at concurrency 1, p99 ≤ 0.4 ms', `${f3(added)} ms`, added <= 0.4);
  }
  const held = r.streams?.held?.mediagate;
  if (held) {
    const n = r.meta.params.streams.count;
    const full = n >= 2000;
    add(`${int(n)} concurrent streams held${full ? '' : ' (smoke: target is 2,000)'}`, `${int(held.maxOpen)} held, ${int(held.failed)} failed`, full ? held.maxOpen >= 2000 && held.failed === 0 : null);
    add('Peak RSS ≤ 200 MB while streaming', `${f1(held.peakRssMb)} MB`, full ? held.peakRssMb <= 200 : null);
    const ttft = r.streams.addedTtftHeld.mediagate.p99Ms;
    const rawTtft = r.streams.addedTtftHeld.raw?.p99Ms;
    // As the req/s ratios: each burst round's ratio of added p99 (each proxy's p99 minus the direct
    // one of the same round), the median over the rounds; the best rounds' figures beside it.
    const added = (name) => ({ rounds: (r.streams.held[name]?.rounds ?? []).map((x, i) => x.ttftP99Ms - r.streams.held.direct.rounds[i]?.ttftP99Ms) });
    const x = pairedRatio(added('mediagate'), added('raw'));
    add(
      `Added time to first token p99 ≤ 2× the raw proxy's (${int(n)} streams opening at 500/s)`,
      `${pairedText(x, rawTtft ? ttft / rawTtft : NaN, times2)}; best rounds ${f2(ttft)} vs ${f2(rawTtft)} ms`,
      full ? x.median <= 2 : null,
    );
  }
  if (r.models) {
    const { mediagate, raw } = r.models.load;
    const x = pairedRatio(mediagate, raw);
    add('GET /v1/models req/s ≥ 85% of raw node:http', pairedText(x, ratio(mediagate.rps, raw.rps)), x.median >= 0.85);
  }
  if (r.tasks) {
    const x = pairedRatio(r.tasks.load.mediagate, r.tasks.load.raw);
    add('GET /v1/video/generations/{id} req/s ≥ 50% of raw node:http', pairedText(x, ratio(r.tasks.load.mediagate.rps, r.tasks.load.raw.rps)), x.median >= 0.5);
    const { small, large } = r.tasks.latencyC1;
    const y = ratio(large.p99Ms, small.p99Ms);
    const full = r.tasks.stored.large >= 1_000_000;
    add(`Task read p99 with ${int(r.tasks.stored.large)} tasks within 20% of 1,000`, `${f3(large.p99Ms)} vs ${f3(small.p99Ms)} ms (${signed((y - 1) * 100, f1)}%)`, full ? y <= 1.2 : null);
  }
  if (r.poller) {
    const p = r.poller;
    // Each open task polled within 2 × poll_interval_ms: open / (2 × interval) polls a second at least.
    const need = p.open / ((2 * p.pollIntervalMs) / 1000);
    add(`Poller: ${int(p.open)} open tasks each polled within 2× poll_interval_ms (≥ ${int(need)} polls/s) with defaults`, `${int(p.busy.pollsPerS)} polls/s`, p.busy.pollsPerS >= need);
    add('Poller CPU < 25% of one core meanwhile', `${f1(p.busy.cpuPercent)}%`, p.busy.cpuPercent < 25);
  }
  if (r.list) {
    const worst = Math.max(...Object.values(r.list.largeOverSmallP50));
    const full = r.list.stored.large >= 1_000_000;
    add(`List of tasks flat from ${int(r.list.stored.small)} to ${int(r.list.stored.large)} tasks (p50 of the first, a deep and a filtered page, within 20%)`, `worst ${signed((worst - 1) * 100, f1)}%`, full ? worst <= 1.2 : null);
  } else add('List of tasks flat from 1,000 to 1,000,000 tasks', 'not measured in this run', null);
  if (r.scale?.load) {
    const { one, two } = r.scale.load;
    // Two instances each on a core of their own: 2 × one's CPU per request ÷ two's, round by round.
    const cpu = pairedRatio(one, two, 'cpuRounds');
    const perCore = { median: 2 * cpu.median, each: cpu.each.map((x) => 2 * x) };
    add('Scale-out: 2 instances on PostgreSQL + Redis ≥ 1.6× one instance (from CPU ms per request: the cores are shared)', `${pairedText(perCore, 2 * ratio(one.cpuMsPerReq, two.cpuMsPerReq), times2)}; measured req/s ${f2(ratio(two.rps, one.rps))}× on shared cores`, perCore.median >= 1.6);
  } else add('Scale-out: 2 instances ≥ 1.6× one instance', r.scale?.skipped ?? 'not measured in this run', null);
  return out;
}

export function renderMarkdown(r) {
  const m = r.meta;
  const L = [];
  L.push(`Run of ${m.date.slice(0, 16).replace('T', ' ')} UTC, \`${m.command}\` (${m.mode}), ${m.elapsedS} s.`);
  L.push('');
  L.push(`- Machine: ${m.machine.nproc} × ${m.machine.cpu}, ${m.machine.memGb} GB RAM, Node ${m.machine.node}; load average at start ${m.machine.loadAvgAtStart.join(' / ')}.`);
  L.push(`- Versions: mediagate ${m.versions.mediagate}${m.versions.commit ? ` (${m.versions.commit})` : ''}, @portkey-ai/gateway ${m.versions['@portkey-ai/gateway']} (with @hono/node-server ${m.versions['@hono/node-server']}), find-my-way ${m.versions['find-my-way']}, undici ${m.versions.undici}, better-sqlite3 ${m.versions['better-sqlite3']}, autocannon ${m.versions.autocannon}${m.nginx ? `, nginx ${m.nginx}` : ''}.`);
  L.push(`- Upstream chat answers: ${m.upstreamChat === 'simulator-chat' ? "the simulator's own chat route" : 'the bench upstream\'s instant answer (the simulator had no chat route)'}.`);
  L.push('');

  if (r.chat) {
    const { load, latencyC1, addedC1 } = r.chat;
    const c = m.params.load;
    L.push(`### Non-streamed chat completion (${c.connections} connections, best of ${m.params.chatRounds ?? c.rounds} × ${c.measureS} s)`);
    L.push('');
    L.push('| path | req/s | p50 ms | p99 ms | vs raw proxy | CPU ms/req | c=1 p50 ms | c=1 p99 ms | added p50 ms | added p99 ms |');
    L.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const [name, label] of [['direct', 'upstream, direct'], ['raw', 'raw Node proxy'], ['nginx', 'nginx, one worker'], ['portkey', 'Portkey gateway'], ['mediagate', 'mediagate, credit-limited key'], ['unlimited', 'mediagate, unlimited key'], ['idempotent', 'mediagate, credit-limited key, new Idempotency-Key each'], ['budgeted', 'mediagate, credit-limited key with a project budget'], ['traced10', 'mediagate, traced (parent-based 10%)'], ['traced100', 'mediagate, traced (always on)']]) {
      const x = load[name];
      if (!x) continue;
      const lat = latencyC1[name];
      const add = addedC1[name];
      L.push(`| ${label} | ${int(x.rps)} | ${x.p50Ms} | ${x.p99Ms} | ${name === 'direct' ? '' : pct(ratio(x.rps, load.raw?.rps))} | ${f3(x.cpuMsPerReq)} | ${f3(lat.p50Ms)} | ${f3(lat.p99Ms)} | ${add ? signed(add.p50Ms) : ''} | ${add ? signed(add.p99Ms) : ''} |`);
    }
    L.push('');
    const tracedCost = ['traced10', 'traced100']
      .filter((n) => load[n] && load.mediagate)
      .map((n) => {
        const cpu = pairedRatio(load[n], load.mediagate, 'cpuRounds');
        const percent = (x) => `${signed(Math.round((x - 1) * 100), String)}%`;
        return `${n}: **${percent(cpu.median)}** CPU per request vs tracing off (rounds ${cpu.each.map(percent).join(', ')})`;
      });
    if (tracedCost.length) L.push(`Tracing (credit-limited key, exporting to a local OTLP receiver; median of the rounds' ratios): ${tracedCost.join('; ')}.`, '');
    const budgetCpu = load.budgeted && load.mediagate ? pairedRatio(load.budgeted, load.mediagate, 'cpuRounds') : null;
    const budgeted = budgetCpu ? ` Budgeted key / credit-limited key: **${f2(budgetCpu.median)}×** the CPU per request (median of the rounds), ${Math.round(ratio(load.budgeted.rps, load.mediagate.rps) * 100)}% req/s.` : '';
    const idem = load.idempotent && load.mediagate ? ` A new Idempotency-Key on every request (claimed and its answer kept) / credit-limited key without: **${f2(pairedRatio(load.idempotent, load.mediagate, 'cpuRounds').median)}×** the CPU per request (median of the rounds), ${Math.round(ratio(load.idempotent.rps, load.mediagate.rps) * 100)}% req/s.` : '';
    const unl = load.unlimited && load.raw ? ` Unlimited key / raw proxy: **${Math.round(ratio(load.unlimited.rps, load.raw.rps) * 100)}%** req/s, ${f1(ratio(load.unlimited.cpuMsPerReq, load.raw.cpuMsPerReq))}× the CPU per request.${budgeted}${idem}` : budgeted + idem;
    L.push(`mediagate (credit-limited key) / Portkey: **${f1(ratio(load.mediagate?.rps, load.portkey?.rps))}×** req/s; mediagate / raw proxy: **${Math.round(ratio(load.mediagate?.rps, load.raw?.rps) * 100)}%** req/s,${load.nginx ? ` mediagate / nginx: **${Math.round(ratio(load.mediagate?.rps, load.nginx.rps) * 100)}%** req/s,` : ''} **${f1(ratio(load.mediagate?.cpuMsPerReq, load.raw?.cpuMsPerReq))}×** the CPU per request (Portkey: ${f1(ratio(load.portkey?.cpuMsPerReq, load.raw?.cpuMsPerReq))}×).${unl} CPU ms/req is the server process's own CPU time (upstream's for the direct row) over the requests it answered. Round by round (each round's ratio; the targets take the median): ${[['credit-limited key / raw proxy', load.mediagate, load.raw], ['credit-limited key / nginx', load.mediagate, load.nginx], ['unlimited key / raw proxy', load.unlimited, load.raw]].filter(([, a, b]) => a && b).map(([label, a, b]) => `${label} ${pairedRatio(a, b).each.map(pct).join(', ')}`).join('; ')}. Rounds (req/s): ${Object.entries(load).map(([n, x]) => `${n} ${x.rounds.join(', ')}`).join('; ')}. Failed requests: ${Object.entries(load).map(([n, x]) => `${n} ${x.failures}`).join(', ')}.`);
    L.push('');
  }

  if (r.streams) {
    const { ttftC1, addedTtftC1, held, addedTtftHeld } = r.streams;
    const s = m.params.streams;
    L.push(`### Streamed chat (time to first token; ${int(s.count)} streams opened at ${int(s.ratePerS)}/s, each held ${s.holdMs / 1000} s)`);
    L.push('');
    L.push('| path | TTFT c=1 p50 / p99 ms | added p50 / p99 ms | streams held at once | completed / failed | TTFT p50 / p99 ms while opening | added p99 ms | peak RSS MB (before) | CPU s |');
    L.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const [name, label] of [['direct', 'upstream, direct'], ['raw', 'raw Node proxy'], ['portkey', 'Portkey gateway*'], ['mediagate', 'mediagate']]) {
      const t = ttftC1[name]?.firstByte;
      const a = addedTtftC1[name];
      const h = held[name];
      if (!h) continue; // not a target of this run (--targets)
      const ah = addedTtftHeld[name];
      L.push(
        `| ${label} | ${f3(t?.p50Ms)} / ${f3(t?.p99Ms)} | ${a ? `${signed(a.p50Ms)} / ${signed(a.p99Ms)}` : ''} | ${int(h.maxOpen)} | ${int(h.completed)} / ${int(h.failed)}${h.failed ? ` (${Object.entries(h.failures).map(([k, v]) => `${k}: ${v}`).join(', ')})` : ''} | ${f1(h.ttftP50Ms)} / ${f1(h.ttftP99Ms)} | ${ah ? signed(ah.p99Ms, f1) : ''} | ${name === 'direct' ? '(upstream) ' : ''}${f1(h.peakRssMb)} (${f1(h.rssBeforeMb)}) | ${f1(h.cpuS)} |`,
      );
    }
    L.push('');
    const perRound = Object.entries(held).filter(([, h]) => h.rounds?.length > 1);
    if (perRound.length) {
      L.push(
        `Opening bursts: ${s.rounds} rounds, the targets taking turns; time to first token from each target's best round, streams held and failures over all rounds, peak RSS from the first (the burst in a fresh process). Rounds (TTFT p99 ms while opening / peak RSS MB): ${perRound.map(([name, h]) => `${name} ${h.rounds.map((x) => f1(x.ttftP99Ms)).join(', ')} / ${h.rounds.map((x) => f1(x.peakRssMb)).join(', ')}`).join('; ')}.`,
      );
      L.push('');
    }
    const v = m.portkeyAsInstalledStream;
    L.push(`\\* Portkey streams run in a second Portkey process with Node's own \`Response\` restored (see "Portkey: two things to know" in docs/benchmarks.md). As npm installs it, a streamed request ${v ? (v.ok ? 'succeeded in this run' : `answered ${v.status} \`${v.body.replace(/\|/g, '\\|')}\``) : 'was not tried'}.`);
    L.push('');
  }

  if (r.models || r.tasks) {
    L.push('### JSON reads beside raw node:http answering the same bytes');
    L.push('');
    L.push('| read | mediagate req/s | p99 ms | CPU ms/req | raw node:http req/s | p99 ms | CPU ms/req | mediagate / raw req/s |');
    L.push('|---|---:|---:|---:|---:|---:|---:|---:|');
    if (r.models) {
      const { mediagate, raw } = r.models.load;
      L.push(`| \`GET /v1/models\` (${r.models.models} models, ${int(r.models.bytes)} B) | ${int(mediagate.rps)} | ${mediagate.p99Ms} | ${f3(mediagate.cpuMsPerReq)} | ${int(raw.rps)} | ${raw.p99Ms} | ${f3(raw.cpuMsPerReq)} | ${Math.round(ratio(mediagate.rps, raw.rps) * 100)}% |`);
    }
    if (r.tasks) {
      const { mediagate, mediagateLarge, raw } = r.tasks.load;
      L.push(`| \`GET /v1/video/generations/{id}\`, ${int(r.tasks.stored.small)} tasks stored (${int(r.tasks.bytes)} B) | ${int(mediagate.rps)} | ${mediagate.p99Ms} | ${f3(mediagate.cpuMsPerReq)} | ${int(raw.rps)} | ${raw.p99Ms} | ${f3(raw.cpuMsPerReq)} | ${Math.round(ratio(mediagate.rps, raw.rps) * 100)}% |`);
      L.push(`| same, ${int(r.tasks.stored.large)} tasks stored | ${int(mediagateLarge.rps)} | ${mediagateLarge.p99Ms} | ${f3(mediagateLarge.cpuMsPerReq)} | | | | ${Math.round(ratio(mediagateLarge.rps, raw.rps) * 100)}% |`);
    }
    L.push('');
    if (r.tasks) {
      const { small, large } = r.tasks.latencyC1;
      L.push(
        `Task read one at a time (random ids): ${int(r.tasks.stored.small)} tasks p50 ${f3(small.p50Ms)} / p99 ${f3(small.p99Ms)} ms; ${int(r.tasks.stored.large)} tasks p50 ${f3(large.p50Ms)} / p99 ${f3(large.p99Ms)} ms (p99 ${signed((ratio(large.p99Ms, small.p99Ms) - 1) * 100, f1)}%). Seeding ${int(r.tasks.stored.large)} rows took ${f1(r.tasks.seeding?.large?.seconds)} s.`,
      );
      L.push('');
    }
  }

  if (r.scale) {
    const sc = r.scale;
    L.push('### Scale-out: instances on one PostgreSQL and one Redis (non-streamed chat, credit-limited key)');
    L.push('');
    if (sc.skipped) L.push(`Not measured: ${sc.skipped}.`);
    else {
      const { one, two } = sc.load;
      L.push('| instances | req/s | p50 ms | p99 ms | CPU ms/req (all instances) | PostgreSQL transactions / req | rows written / req | Redis commands / req |');
      L.push('|---|---:|---:|---:|---:|---:|---:|---:|');
      L.push(`| 1 (direct) | ${int(one.rps)} | ${one.p50Ms} | ${one.p99Ms} | ${f3(one.cpuMsPerReq)} | ${f3(sc.perRequest.one.pgXactsPerReq)} | ${f3(sc.perRequest.one.pgRowsPerReq)} | ${f2(sc.perRequest.one.redisCommandsPerReq)} |`);
      L.push(`| 2 (loopback TCP balancer) | ${int(two.rps)} | ${two.p50Ms} | ${two.p99Ms} | ${f3(two.cpuMsPerReq)} | ${f3(sc.perRequest.two.pgXactsPerReq)} | ${f3(sc.perRequest.two.pgRowsPerReq)} | ${f2(sc.perRequest.two.redisCommandsPerReq)} |`);
      L.push('');
      const measured = ratio(two.rps, one.rps);
      const perCore = 2 * ratio(one.cpuMsPerReq, two.cpuMsPerReq);
      L.push(
        `Two instances / one: **${f2(measured)}×** req/s measured on this ${r.meta.machine.nproc}-core machine (the load generator, the upstream, the balancer, PostgreSQL and Redis share the same cores). From CPU time per request, two instances each on a core of its own would serve **${f2(perCore)}×** one instance's req/s (2 × one's CPU ms/req ÷ two's). Balancer CPU over the phase: ${f1(sc.balancerCpuS)} s. Rounds (req/s): one ${one.rounds.join(', ')}; two ${two.rounds.join(', ')}. Failed requests: one ${one.failures}, two ${two.failures}.`,
      );
    }
    L.push('');
  }

  if (r.poller) {
    const p = r.poller;
    L.push(`### Video task poller (gateway process CPU; poll_interval_ms ${p.pollIntervalMs}, tick_ms ${p.tickMs}, batch ${p.batch})`);
    L.push('');
    L.push('| state | window s | CPU % of one core | polls/s | provider calls/s | CPU ms per poll |');
    L.push('|---|---:|---:|---:|---:|---:|');
    const calls = (w) => (w.callsPerS === undefined ? '—' : w.callsPerS);
    L.push(`| no open task | ${p.idle.seconds} | ${f1(p.idle.cpuPercent)} | ${p.idle.pollsPerS} | ${calls(p.idle)} | — |`);
    L.push(`| ${int(p.open)} open tasks | ${p.busy.seconds} | ${f1(p.busy.cpuPercent)} | ${p.busy.pollsPerS} | ${calls(p.busy)} | ${f3(p.busy.cpuMsPerPoll)} |`);
    L.push('');
  }

  if (r.list) {
    const l = r.list;
    L.push(`### Task list pages (${l.pageSize} per page, concurrency 1): ${int(l.stored.small)} vs ${int(l.stored.large)} tasks stored`);
    L.push('');
    L.push('| page | p50 ms small | p50 ms large | large / small |');
    L.push('|---|---:|---:|---:|');
    for (const kind of ['first', 'deep', 'status']) {
      L.push(`| ${kind} | ${f3(l.latencyC1[`${kind}Small`].p50Ms)} | ${f3(l.latencyC1[`${kind}Large`].p50Ms)} | ${f2(l.largeOverSmallP50[kind])} |`);
    }
    L.push('');
  }

  if (r.convert) {
    L.push('### Chat pass-through vs converted paths (one gateway, same request)');
    L.push('');
    L.push('| path | kind | req/s | CPU ms/req | p50 ms (c=1) | failed |');
    L.push('|---|---|---:|---:|---:|---:|');
    for (const [name, x] of Object.entries(r.convert.paths)) {
      L.push(`| ${name} | ${x.pass ? 'pass-through' : 'converted'} | ${int(x.rps)} | ${f3(x.cpuMsPerReq)} | ${f3(x.p50MsC1)} | ${x.failures} |`);
    }
    L.push('');
    const b = r.convert.baseline;
    if (b) {
      L.push(`### Chat pass-through: this build vs ${b.commit ?? b.root} (same rounds, a gateway each)`);
      L.push('');
      L.push('| path | req/s now | req/s before | ratio | CPU ms/req now | before | ratio | p50 ms (c=1) now | before | ratio |');
      L.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
      for (const [name, x] of Object.entries(b.paths)) {
        const cur = r.convert.paths[name];
        L.push(`| ${name} | ${int(cur.rps)} | ${int(x.rps)} | ${f2(x.ratio.rps)} | ${f3(cur.cpuMsPerReq)} | ${f3(x.cpuMsPerReq)} | ${f2(x.ratio.cpuMsPerReq)} | ${f3(cur.p50MsC1)} | ${f3(x.p50MsC1)} | ${f2(x.ratio.p50MsC1)} |`);
      }
      L.push('');
      L.push('Ratios are now / before: above 1 is faster for req/s, slower for CPU and p50.');
      L.push('');
    }
  }

  if (r.targets?.length) {
    L.push('### Targets of the issue');
    L.push('');
    L.push('| target | measured | met |');
    L.push('|---|---|---|');
    for (const t of r.targets) L.push(`| ${t.target} | ${t.measured} | ${t.met === null ? 'n/a' : t.met ? 'yes' : '**no**'} |`);
    L.push('');
  }
  if (r.profile) {
    L.push(`### mediagate CPU profile (top self time, share of ${int(r.profile.totalMs)} ms busy time sampled)`);
    L.push('');
    for (const f of r.profile.functions.slice(0, 15)) L.push(`- ${f.pct}% \`${f.name}\``);
    L.push('');
  }
  return L.join('\n');
}

const START = '<!-- bench:results:start -->';
const END = '<!-- bench:results:end -->';

/** Replaces the generated part of docs/benchmarks.md (between the markers) with this run's. */
export function updateDoc(path, md) {
  if (!existsSync(path)) return;
  const doc = readFileSync(path, 'utf8');
  const a = doc.indexOf(START);
  const b = doc.indexOf(END);
  if (a < 0 || b < a) return;
  writeFileSync(path, `${doc.slice(0, a + START.length)}\n${md}\n${doc.slice(b)}`);
}
