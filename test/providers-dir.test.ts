import { copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { main } from '../src/main.js';
import type { ModelConfig } from '../src/config/schema.js';
import { validateConfig } from '../src/config-file/loader.js';
import { ConfigReloader, type ReloadLog } from '../src/cluster/reload.js';
import { startSimulator, type Simulator } from '../src/simulator/server.js';
import { sampleVideo } from '../src/simulator/mp4.js';
import { startGateway, tempDir, type TestGateway } from './helpers/gateway.js';
import { createAndFinish } from './helpers/provider-video.js';

// An operator adds providers at runtime: manifests in providers.dir (the two of examples/providers,
// each run against its own simulator part) load at start, change and break on reload, and the
// CLI checks and lists them.

const EXAMPLES = join(__dirname, '..', 'examples', 'providers');

/** `mediagate …` run in this process (the CLI's own entry point), its output captured. */
async function cli(...args: (string | Record<string, string>)[]): Promise<{ status: number; stdout: string; stderr: string }> {
  const env = args.find((a) => typeof a === 'object') as Record<string, string> | undefined;
  const saved = { ...process.env };
  Object.assign(process.env, env);
  const out: string[] = [];
  const err: string[] = [];
  const o = vi.spyOn(process.stdout, 'write').mockImplementation((c) => (out.push(String(c)), true));
  const e = vi.spyOn(process.stderr, 'write').mockImplementation((c) => (err.push(String(c)), true));
  try {
    const status = await main(args.filter((a): a is string => typeof a === 'string'));
    return { status, stdout: out.join(''), stderr: err.join('') };
  } finally {
    o.mockRestore();
    e.mockRestore();
    process.env = saved;
  }
}
const video = (modes: ModelConfig['modes']): ModelConfig => ({ kind: 'video', modes, price: { per_second: { '720p': 0.04, '1080p': 0.04, '480p': 0.05 } } });

function recorder(): ReloadLog & { lines: { level: string; msg: string; obj: any }[] } {
  const lines: { level: string; msg: string; obj: any }[] = [];
  return { lines, info: (obj, msg) => lines.push({ level: 'info', msg, obj }), warn: (obj, msg) => lines.push({ level: 'warn', msg, obj }) };
}

describe('providers.dir', () => {
  let sim: Simulator;
  let dir: ReturnType<typeof tempDir>;
  let gw: TestGateway;
  let key: string;
  let raw: any;
  const zhipuFile = () => join(dir.path, 'zhipu.yaml');

  const reload = (edit: (r: any) => void = () => undefined) => {
    const next = structuredClone(raw);
    edit(next);
    const log = recorder();
    return new ConfigReloader(gw.services, () => validateConfig(next, 'reloaded config'), log).reload('test').then((report) => ({ report, log }));
  };
  const finish = async (model: string) => {
    const done = await createAndFinish(gw, key, { model, prompt: 'A red fox runs through fresh snow.' });
    expect(done.status, JSON.stringify(done)).toBe('SUCCESS');
    return done;
  };

  beforeAll(async () => {
    sim = await startSimulator({ videoSeconds: 0.3, urlTtlS: 3600 });
    dir = tempDir();
    for (const f of ['zhipu.yaml', 'xai.yaml']) copyFileSync(join(EXAMPLES, f), join(dir.path, f));
    const channel = (type: string, models: string[]) => ({ name: type, type, base_url: sim.url, api_key: `${type}-key`, allow_private_network: true, models });
    raw = {
      simulator: { embedded: false },
      providers: { dir: dir.path },
      channels: [channel('zhipu', ['cogvideox-3']), channel('xai', ['grok-imagine-video'])],
      models: { 'cogvideox-3': video(['text', 'first_frame', 'first_last_frame']), 'grok-imagine-video': video(['text', 'first_frame']) },
    };
    gw = await startGateway(structuredClone(raw));
    key = (await gw.createKey()).key;
  });
  afterAll(async () => {
    await gw?.close();
    await sim?.close();
    dir?.remove();
  });

  it('serves a loaded provider: a task reaches SUCCESS and /content streams the video', async () => {
    const done = await finish('cogvideox-3');
    const res = await fetch(`${gw.url}/v1/video/generations/${done.task_id}/content`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('video/mp4');
    expect(Buffer.from(await res.arrayBuffer()).equals(sampleVideo())).toBe(true);
    await finish('grok-imagine-video');
    // A value the manifest's model does not take is refused before any upstream call, naming the allowed ones.
    const refused = await fetch(`${gw.url}/v1/video/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'cogvideox-3', prompt: 'x', duration: 7 }),
    });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(await refused.json())).toMatch(/5.*10/);
  });

  it('reloads a changed manifest: its new model is listed and works', async () => {
    writeFileSync(zhipuFile(), `${readFileSync(zhipuFile(), 'utf8')}\n  - { id: cogvideox-flash, modes: [text, first_frame], resolutions: [720p, 1080p], default_resolution: 1080p }\n`);
    const { report } = await reload((r) => {
      r.models['cogvideox-flash'] = video(['text', 'first_frame']);
      r.channels[0].models.push('cogvideox-flash');
    });
    expect(report).toMatchObject({ ok: true, added: ['cogvideox-flash'] });
    expect(report.providers.loaded.sort()).toEqual(['xai', 'zhipu']);
    raw.models['cogvideox-flash'] = video(['text', 'first_frame']);
    raw.channels[0].models.push('cogvideox-flash');
    const models = (await (await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).json()) as { data: { id: string }[] };
    expect(models.data.map((m) => m.id)).toContain('cogvideox-flash');
    await finish('cogvideox-flash');
  });

  it('refuses a broken manifest with its file, field and allowed values; its previous version and the rest keep serving', async () => {
    writeFileSync(zhipuFile(), readFileSync(zhipuFile(), 'utf8').replace('SUCCESS: succeeded', 'SUCCESS: done'));
    const { report, log } = await reload();
    expect(report.ok).toBe(false);
    expect(report.error).toBeUndefined();
    expect(report.providers.refused).toHaveLength(1);
    const [refusal] = report.providers.refused;
    expect(refusal.file).toBe(zhipuFile());
    expect(refusal.kept).toBe('zhipu');
    expect(refusal.error).toContain(zhipuFile());
    expect(refusal.error).toMatch(/videos\.task\.status\.map\.SUCCESS.*queued, running, succeeded, failed/);
    expect(log.lines.find((l) => l.level === 'warn')).toMatchObject({ msg: 'provider manifest refused; its previous version stays in force', obj: { file: zhipuFile() } });
    await finish('cogvideox-flash');
    await finish('grok-imagine-video');
  });

  it('refuses a manifest that takes a built-in type name, and a reload whose channel lost its manifest', async () => {
    writeFileSync(join(dir.path, 'kling.yaml'), readFileSync(join(EXAMPLES, 'xai.yaml'), 'utf8').replace('type: xai', 'type: kling'));
    const clash = (await reload()).report;
    expect(clash.providers.refused.map((r) => r.error).join('\n')).toContain('type: "kling" is a built-in provider type');
    rmSync(join(dir.path, 'kling.yaml'));

    rmSync(join(dir.path, 'xai.yaml'));
    const { report } = await reload();
    expect(report.ok).toBe(false);
    expect(report.error).toMatch(/channels\[1\]\.type: .*\(got "xai"\); the manifest .*xai\.yaml that declared it is no longer in providers\.dir/);
    // Nothing changed: the xAI channel still serves.
    await finish('grok-imagine-video');
    copyFileSync(join(EXAMPLES, 'xai.yaml'), join(dir.path, 'xai.yaml'));
  });

  it('providers check passes each example and names the field of a truncated copy; providers list shows the loaded types', async () => {
    for (const f of ['xai.yaml', 'zhipu.yaml']) {
      const r = await cli('providers', 'check', join(EXAMPLES, f));
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toContain('nothing was sent');
      expect(r.stdout).toMatch(/authorization: Bearer \*\*\*\*/);
      expect(r.stdout).not.toContain('API_KEY');
    }
    const text = readFileSync(join(EXAMPLES, 'xai.yaml'), 'utf8');
    const truncated = join(dir.path, 'truncated.yml.txt');
    writeFileSync(truncated, text.slice(0, text.indexOf('  task_id:')));
    const bad = await cli('providers', 'check', truncated);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain(`${truncated}: `);
    expect(bad.stderr).toContain('videos.task_id: required');

    // The broken zhipu.yaml is refused; in this process its version in force is kept and listed.
    // A relative providers.dir is relative to the config file.
    const elsewhere = tempDir();
    const configFile = join(elsewhere.path, 'mediagate.yaml');
    writeFileSync(configFile, `providers: { dir: ../${basename(dir.path)} }\n`);
    const list = await cli('providers', 'list', '--json', { MEDIAGATE_CONFIG: configFile });
    expect(list.status, list.stderr).toBe(0);
    const listed = JSON.parse(list.stdout) as { providers: { type: string; source: string; capabilities: { videos?: string[] }; models: string[] }[]; refused: { file: string; kept?: string }[] };
    expect(listed.providers.find((p) => p.type === 'xai')).toMatchObject({ source: join(dir.path, 'xai.yaml'), capabilities: { videos: ['text', 'first_frame'] }, models: ['grok-imagine-video'] });
    expect(listed.providers.find((p) => p.type === 'kling')).toMatchObject({ source: 'built-in' });
    expect(listed.providers.find((p) => p.type === 'zhipu')).toMatchObject({ source: zhipuFile(), models: ['cogvideox-3', 'cogvideox-flash'] });
    expect(listed.refused).toEqual([expect.objectContaining({ file: zhipuFile(), kept: 'zhipu' })]);
    elsewhere.remove();
  });
});
