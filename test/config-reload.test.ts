import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from './helpers/gateway.js';
import { freshRedisPrefix } from './helpers/redis.js';
import { eventually, simFault } from './helpers/video.js';
import { validateConfig } from '../src/config-file/loader.js';
import type { Config } from '../src/config/schema.js';
import { ConfigReloader, type ReloadLog } from '../src/cluster/reload.js';
import { ClusterBus, publishOnce, type ClusterEvent } from '../src/cluster/bus.js';
import { startCluster } from '../src/cluster/index.js';

// Reloading the config of a running instance (SIGHUP, or a peer's message through Redis), in
// process: what changes, what in-flight requests keep, what a bad file or a dead Redis leaves.

function recorder(): ReloadLog & { lines: { level: string; msg: string; obj: object }[] } {
  const lines: { level: string; msg: string; obj: object }[] = [];
  return {
    lines,
    info: (obj, msg) => lines.push({ level: 'info', msg, obj }),
    warn: (obj, msg) => lines.push({ level: 'warn', msg, obj }),
  };
}

/** The gateway's config as a fresh file would give it, changed by `edit`. */
function nextConfig(gw: TestGateway, edit: (raw: any) => void): Config {
  const raw = structuredClone(gw.config) as any;
  for (const ch of raw.channels) if (ch.type === 'simulator') delete ch.base_url;
  edit(raw);
  return validateConfig(raw, 'reloaded config');
}

const chat = (gw: TestGateway, key: string, model: string) =>
  fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));

const modelIds = async (gw: TestGateway, key: string) =>
  ((await (await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).json()) as { data: { id: string }[] }).data.map((m) => m.id);

describe('config reload', () => {
  let gw: TestGateway;
  let key: string;
  beforeAll(async () => {
    gw = await startGateway();
    key = (await gw.createKey()).key;
  });
  afterAll(async () => gw.close());

  it('adds and removes models and channels, and says which changed sections need a restart', async () => {
    const log = recorder();
    let next = nextConfig(gw, (raw) => {
      raw.models['sim-chat-2'] = { kind: 'chat', owned_by: 'simulator' };
      raw.channels.push({ name: 'second', type: 'simulator', models: ['sim-chat-2'] });
      delete raw.models['sim-claude'];
      raw.channels[0].models = raw.channels[0].models.filter((m: string) => m !== 'sim-claude');
      raw.server.body_limit_mb = 7;
    });
    const reloader = new ConfigReloader(gw.services, () => next, log);
    expect((await reloader.reload('test')).ok).toBe(true);
    const ids = await modelIds(gw, key);
    expect(ids).toContain('sim-chat-2');
    expect(ids).not.toContain('sim-claude');
    expect((await chat(gw, key, 'sim-chat-2')).status).toBe(200);
    const gone = await chat(gw, key, 'sim-claude');
    expect(gone.status).toBe(404);
    expect(gone.body.error.code).toBe('model_not_found');
    expect(log.lines.find((l) => l.msg === 'config reloaded')!.obj).toMatchObject({ added: ['sim-chat-2'], removed: ['sim-claude'] });
    expect(log.lines.find((l) => l.level === 'warn')!.obj).toEqual({ sections: ['server'] });
    // The running listener keeps its body limit until a restart.
    expect(gw.config.server.body_limit_mb).toBe(20);

    // A model's `created` is its first-seen time, stored once: a second reload keeps it.
    const created = async () =>
      ((await (await fetch(`${gw.url}/v1/models/sim-chat-2`, { headers: { authorization: `Bearer ${key}` } })).json()) as { created: number }).created;
    const first = await created();
    next = nextConfig(gw, () => undefined);
    expect((await reloader.reload('again')).ok).toBe(true);
    expect(await created()).toBe(first);
  });

  it('keeps a request in flight on the catalog it started with', async () => {
    const log = recorder();
    await simFault(gw.services.simulator!.url, { match: 'openai.chat', kind: 'latency', ms: 1500, count: 1 });
    const before = Number(((await (await fetch(`${gw.services.simulator!.url}/__sim/stats`)).json()) as any).counts['openai.chat'] ?? 0);
    const inFlight = chat(gw, key, 'sim-chat');
    await eventually(async () => Number(((await (await fetch(`${gw.services.simulator!.url}/__sim/stats`)).json()) as any).counts['openai.chat'] ?? 0) > before, 10_000, 'the request at the simulator');

    // While it waits upstream, the model disappears from the config.
    const next = nextConfig(gw, (raw) => {
      delete raw.models['sim-chat'];
      for (const ch of raw.channels) ch.models = ch.models.filter((m: string) => m !== 'sim-chat');
    });
    expect((await new ConfigReloader(gw.services, () => next, log).reload('test')).ok).toBe(true);
    expect((await chat(gw, key, 'sim-chat')).status).toBe(404);
    const done = await inFlight;
    expect(done.status).toBe(200);
    expect(done.body.choices[0].message.role).toBe('assistant');
  });

  it('keeps the running config when the file does not load or does not apply', async () => {
    const log = recorder();
    const ids = await modelIds(gw, key);
    const broken = new ConfigReloader(
      gw.services,
      () => {
        throw new Error('mediagate.yaml: models.x.kind: unknown kind');
      },
      log,
    );
    expect((await broken.reload('test')).ok).toBe(false);
    expect(log.lines.at(-1)).toMatchObject({ level: 'warn', msg: 'config reload failed; keeping the running config', obj: { error: 'mediagate.yaml: models.x.kind: unknown kind' } });

    // A simulator channel with no base_url needs the embedded simulator, which this instance has not got.
    const simless = { ...gw.services, simulator: null };
    const next = nextConfig(gw, (raw) => (raw.models['sim-chat-3'] = { kind: 'chat' }));
    expect((await new ConfigReloader(simless, () => next, log).reload('test')).ok).toBe(false);
    expect(await modelIds(gw, key)).toEqual(ids);
  });
});

describe('cluster messages through Redis', () => {
  const redis = freshRedisPrefix();
  const buses: ClusterBus[] = [];
  afterAll(async () => {
    for (const b of buses) await b.close();
    await redis.cleanup();
  });

  async function bus(): Promise<{ bus: ClusterBus; got: ClusterEvent[] }> {
    const got: ClusterEvent[] = [];
    const b = await ClusterBus.connect(redis.config, { reload: () => got.push('reload'), keys: () => got.push('keys'), channels: () => got.push('channels') }, () => undefined);
    buses.push(b);
    return { bus: b, got };
  }

  it('delivers an instance\'s reload to every other instance, not to itself', async () => {
    const [one, two, three] = [await bus(), await bus(), await bus()];
    expect(await one.bus.publish('reload')).toBe(3);
    await eventually(async () => two.got.length === 1 && three.got.length === 1, 5000, 'the reload messages');
    expect(two.got).toEqual(['reload']);
    expect(three.got).toEqual(['reload']);
    expect(one.got).toEqual([]);

    // The CLI (`mediagate reload`, `keys revoke`) is no instance: everyone acts on it.
    expect(await publishOnce(redis.config, 'keys', { key_id: 'key_x' })).toBe(3);
    await eventually(async () => [one, two, three].every((x) => x.got.includes('keys')), 5000, 'the key messages');
  });

  it('ignores messages under another key prefix', async () => {
    const mine = await bus();
    const other = freshRedisPrefix();
    expect(await publishOnce(other.config, 'reload')).toBe(0);
    expect(await publishOnce(redis.config, 'keys')).toBeGreaterThanOrEqual(1);
    await eventually(async () => mine.got.length > 0, 5000, 'the own-prefix message');
    expect(mine.got).toEqual(['keys']);
  });
});

describe('a reload while Redis is unreachable', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    // Nothing listens on port 1: limits fall back to memory, cluster messages cannot be sent.
    gw = await startGateway({ redis: { url: 'redis://127.0.0.1:1', key_prefix: 'mgtest:down:' } }, { expectWarnings: /redis/i });
    expect(gw.warnings.join('\n')).toMatch(/redis unreachable at start/);
  });
  afterAll(async () => gw.close());

  it('still reloads this instance and keeps serving, reporting that the others were not told', async () => {
    const log = recorder();
    let next = gw.config;
    const cluster = await startCluster(gw.services, { load: () => next, log });
    try {
      next = nextConfig(gw, (raw) => {
        raw.models['sim-chat-down'] = { kind: 'chat' };
        raw.channels[0].models.push('sim-chat-down');
      });
      const { key } = await gw.createKey();
      expect((await cluster.reloadAndTell('SIGHUP')).ok).toBe(true);
      expect(await modelIds(gw, key)).toContain('sim-chat-down');
      expect((await chat(gw, key, 'sim-chat-down')).status).toBe(200);
      expect(log.lines.some((l) => l.level === 'warn' && /not sent to the other instances/.test(l.msg))).toBe(true);
    } finally {
      await cluster.close();
    }
  });
});
