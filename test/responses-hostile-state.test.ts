import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { tempDir } from './helpers/gateway.js';
import { freshDatabaseUrl } from './helpers/databases.js';
import { MAIN, runCli, spawnGateway, type GatewayProcess } from './helpers/gateway-process.js';
import { CHAT_TEST_MODELS } from './helpers/chat.js';

// Small requests that name large stored Responses state — 400 references to one stored 100 KB item
// (an 18 KB body naming 40 MB), references to 3 MB of distinct items, a few words continuing a 0.9
// MB conversation with more items besides — sent over and over by three clients at once, are refused
// cheaply: a `mediagate serve` process stays alive, its memory (RSS, read from /proc) within 100 MB
// of where it started and /healthz answering within 100 ms throughout. server.body_limit_mb is 1
// here (the limit bounds what a request may expand to); small requests on stored state are served
// in between.

// Long words: few tokens for the simulator to count, many bytes for the gateway.
const ITEM_TEXT = `${'w'.repeat(999)} `.repeat(100);
const TURN_TEXT = `${'t'.repeat(999)} `.repeat(300);

function rssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

/** `mediagate simulate` in a process of its own, so its work does not delay this one's measurements. */
async function spawnSimulator(): Promise<{ url: string; proc: ChildProcess }> {
  const proc = spawn(process.execPath, [MAIN, 'simulate', '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    proc.stdout!.on('data', (c: Buffer) => {
      out += String(c);
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    proc.once('exit', () => reject(new Error(`simulator exited: ${out}`)));
  });
  return { url, proc };
}

describe('hostile use of stored Responses state against a gateway process', () => {
  let sim: { url: string; proc: ChildProcess } | undefined;
  let gw: GatewayProcess;
  let key = '';
  const dir = tempDir('mediagate-responses-hostile-');
  let db: Awaited<ReturnType<typeof freshDatabaseUrl>> | undefined;

  beforeAll(async () => {
    sim = await spawnSimulator();
    db = await freshDatabaseUrl();
    const configPath = join(dir.path, 'mediagate.yaml');
    writeFileSync(
      configPath,
      stringify({
        server: { host: '127.0.0.1', port: 0, body_limit_mb: 1 },
        database: { url: db.url },
        log: { level: 'warn' },
        channels: [{ name: 'oai', type: 'openai', base_url: `${sim.url}/v1`, api_key: 'sk-test-openai-upstream', models: ['gpt-sim'] }],
        models: { 'gpt-sim': CHAT_TEST_MODELS['gpt-sim'] },
      }),
    );
    const created = await runCli(configPath, ['keys', 'create', '--name', 'hostile', '--json'], 60_000);
    expect(created.status).toBe(0);
    key = (JSON.parse(created.stdout.trim().split('\n').pop()!) as { key: string }).key;
    gw = await spawnGateway(configPath, {}, 60_000);
  }, 150_000);

  afterAll(async () => {
    await gw?.stop();
    sim?.proc.kill('SIGTERM');
    await db?.drop();
    dir.remove();
  });

  async function respond(body: Record<string, unknown>): Promise<{ status: number; id: string }> {
    const res = await fetch(`${gw.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-sim', max_output_tokens: 5, ...body }),
    });
    const json = (await res.json()) as { id?: string };
    return { status: res.status, id: json.id ?? '' };
  }

  /** Samples the process's RSS and /healthz's answer time until `work` ends. */
  async function measure(pid: number, work: () => Promise<void>): Promise<{ maxRss: number; slowest: number; all: number[] }> {
    let maxRss = 0;
    let slowest = 0;
    const all: number[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const t0 = performance.now();
        const res = await fetch(`${gw.url}/healthz`);
        await res.arrayBuffer();
        slowest = Math.max(slowest, performance.now() - t0);
        all.push(performance.now() - t0);
        expect(res.status).toBe(200);
        maxRss = Math.max(maxRss, rssBytes(pid));
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    try {
      await work();
    } finally {
      sampling = false;
      await sampler;
    }
    return { maxRss, slowest, all };
  }

  it('refuses the amplifying requests while staying small and responsive', async () => {
    const pid = gw.proc.pid!;
    const item = (i: number) => ({ type: 'message', id: `msg_big${i}`, role: 'user', content: [{ type: 'input_text', text: ITEM_TEXT }] });
    for (let at = 0; at < 30; at += 5) expect((await respond({ input: Array.from({ length: 5 }, (_, i) => item(at + i)) })).status).toBe(200);
    const refs = (ids: number[]) => ids.map((i) => ({ type: 'item_reference', id: `msg_big${i}` }));
    const flood = refs(Array.from({ length: 400 }, () => 0));
    const distinct = refs(Array.from({ length: 30 }, (_, i) => i));
    // A conversation of three 0.3 MB turns (0.9 MB: the most 1 MB leaves room for), and a short one.
    let long = '';
    for (let turn = 0; turn < 3; turn++) {
      const r = await respond({ input: TURN_TEXT, ...(long ? { previous_response_id: long } : {}) });
      expect(r.status).toBe(200);
      long = r.id;
    }
    const short = await respond({ input: 'a short start' });
    expect((await respond({ input: 'and more', previous_response_id: short.id })).status).toBe(200);
    const quiet = await measure(pid, () => new Promise((r) => setTimeout(r, 2000)));
    const startRss = rssBytes(pid);

    const statuses = new Map<string, Set<number>>();
    const note = (what: string, status: number) => statuses.set(what, (statuses.get(what) ?? new Set()).add(status));
    const client = async () => {
      for (let round = 0; round < Number(process.env.H34_ROUNDS ?? 25); round++) {
        note('flood', (await respond({ input: flood })).status);
        note('distinct', (await respond({ input: distinct })).status);
        note('continue', (await respond({ input: [{ role: 'user', content: 'go on' }, ...refs([round % 30, (round + 1) % 30])], previous_response_id: long })).status);
        note('small', (await respond({ input: 'still there?', previous_response_id: short.id })).status);
      }
    };
    const began = Date.now();
    const { maxRss, slowest, all } = await measure(pid, () => Promise.all(Array.from({ length: Number(process.env.H34_CLIENTS ?? 3) }, client)).then(() => undefined));

    expect(gw.proc.exitCode).toBeNull();
    expect(statuses).toEqual(
      new Map([
        ['flood', new Set([400])],
        ['distinct', new Set([413])],
        ['continue', new Set([413])],
        ['small', new Set([200])],
      ]),
    );
    const grewMb = (Math.max(maxRss, startRss) - startRss) / 1024 / 1024;
    process.stdout.write(
      `responses-hostile-state: RSS ${(startRss / 1048576).toFixed(0)} MB at start, peak +${grewMb.toFixed(0)} MB; slowest /healthz ${slowest.toFixed(1)} ms (${quiet.slowest.toFixed(1)} ms when idle); ${Date.now() - began} ms of hostile requests\n`,
    );
    const pct = (xs: number[]) => { const v = [...xs].sort((a, b) => a - b); return [0.5, 0.9, 0.95, 0.99, 1].map((q) => v[Math.min(v.length - 1, Math.floor(q * v.length))].toFixed(0)).join('/'); };
    process.stdout.write(`DIST idle n=${quiet.all.length} ${pct(quiet.all)} hostile n=${all.length} ${pct(all)}\n`);
    expect(grewMb).toBeLessThan(100);
    expect(slowest).toBeLessThan(100);
  }, 180_000);
});
