import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { tempDir } from './helpers/gateway.js';
import { freshDatabaseUrl } from './helpers/databases.js';
import { openStore } from '../src/store/db.js';

// `mediagate channels …` on the store, as `keys` does: the credential comes from an environment
// variable (never the command line) and is stored sealed; the config file's channels are listed
// and read-only but for enable/disable; every change is audited.

const MAIN = join(__dirname, '..', 'dist', 'main.js');
const CREDENTIAL = `sk-cli-${randomBytes(12).toString('hex')}`;

describe('mediagate channels (CLI)', { timeout: 120_000 }, () => {
  const dir = tempDir();
  let db: Awaited<ReturnType<typeof freshDatabaseUrl>>;
  let configPath: string;
  const env = () => ({ ...process.env, MEDIAGATE_CONFIG: configPath, MEDIAGATE_SECRET_KEY: randomKey, UPSTREAM_KEY: CREDENTIAL });
  const randomKey = randomBytes(32).toString('base64');
  const run = (...args: string[]) => spawnSync(process.execPath, [MAIN, ...args], { env: env(), encoding: 'utf8', timeout: 20000 });

  beforeAll(async () => {
    db = await freshDatabaseUrl();
    configPath = join(dir.path, 'mediagate.yaml');
    writeFileSync(
      configPath,
      `database: { url: "${db.url}" }\nchannels:\n  - { name: s, type: simulator, base_url: "http://127.0.0.1:9", models: [sim-chat] }\nmodels:\n  sim-chat: { kind: chat }\n  sim-image: { kind: image }\n`,
    );
    expect(run('migrate').status).toBe(0);
  });
  afterAll(async () => {
    await db.drop();
    dir.remove();
  });

  it('adds, lists, updates, switches and removes a channel; the credential never shows', async () => {
    const added = run('channels', 'add', 'rt', '--type', 'openai', '--base-url', 'https://api.example.com/v1', '--api-key-env', 'UPSTREAM_KEY', '--models', 'sim-chat,sim-image', '--map', 'sim-chat=gpt-4o-mini', '--priority', '-2', '--json');
    expect(added.status, added.stderr).toBe(0);
    expect(JSON.parse(added.stdout)).toMatchObject({ name: 'rt', source: 'api', type: 'openai', priority: -2, api_key: 'set' });

    const listed = run('channels', 'list', '--json');
    expect(listed.status).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual([
      expect.objectContaining({ name: 's', source: 'config', enabled: true }),
      expect.objectContaining({ name: 'rt', source: 'api', enabled: true, models: ['sim-chat', 'sim-image'] }),
    ]);

    expect(run('channels', 'update', 'rt', '--weight', '3').status).toBe(0);
    const tested = run('channels', 'update', 'rt', '--test-interval', '300', '--json');
    expect(tested.status, tested.stderr).toBe(0);
    const badInterval = run('channels', 'update', 'rt', '--test-interval', 'hourly');
    expect(badInterval.status).toBe(2);
    expect(badInterval.stderr).toMatch(/--test-interval must be whole seconds from 0 \(none\) to 86400, got "hourly"/);
    expect(run('channels', 'disable', 'rt').status).toBe(0);
    expect(run('channels', 'disable', 's').status).toBe(0);
    const after = JSON.parse(run('channels', 'list', '--json').stdout) as any[];
    expect(after.map((c) => [c.name, c.enabled, c.weight])).toEqual([
      ['s', false, 1],
      ['rt', false, 3],
    ]);

    // The config file's channel is read-only; refusals are status 1 (conflict) or 2 (bad arguments).
    const readOnly = run('channels', 'update', 's', '--weight', '3');
    expect(readOnly.status).toBe(1);
    expect(readOnly.stderr).toMatch(/config file and is read-only/);
    expect(run('channels', 'remove', 's').status).toBe(1);
    const bad = run('channels', 'add', 'x', '--type', 'openai', '--base-url', 'https://api.example.com', '--models', 'nope');
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/models\[0\]: model "nope" is not declared under models/);
    expect(run('channels', 'add', 'x', '--type', 'openai', '--models', 'sim-chat', '--api-key-env', 'NOT_SET_ANYWHERE').status).toBe(2);
    const keyless = spawnSync(process.execPath, [MAIN, 'channels', 'add', 'y', '--type', 'openai', '--base-url', 'https://api.example.com', '--models', 'sim-chat', '--api-key-env', 'UPSTREAM_KEY'], {
      env: { ...env(), MEDIAGATE_SECRET_KEY: '' },
      encoding: 'utf8',
    });
    expect(keyless.status).toBe(1);
    expect(keyless.stderr).toMatch(/MEDIAGATE_SECRET_KEY is not set/);

    const removed = run('channels', 'remove', 'rt');
    expect(removed.status).toBe(0);
    expect(removed.stdout).toMatch(/Its credentials are wiped\./);
    expect(run('channels', 'remove', 'rt').status).toBe(2);
    expect(run('channels', 'enable', 's').status).toBe(0);
    expect((JSON.parse(run('channels', 'list', '--json').stdout) as any[]).map((c) => c.name)).toEqual(['s']);

    const store = await openStore(db.url);
    try {
      const rows = await store.db.selectFrom('channels').selectAll().execute();
      expect(JSON.stringify(rows)).not.toContain(CREDENTIAL);
      const rt = rows.find((r) => r.name === 'rt')!;
      expect(rt.credentials).toBeNull();
      expect(JSON.parse(rt.body)).toMatchObject({ test_interval_s: 300 });
      const audit = await store.db.selectFrom('audit_log').select(['action', 'target', 'detail']).orderBy('id').execute();
      expect(audit.map((r) => `${r.action} ${r.target}`)).toEqual(['channel.create rt', 'channel.update rt', 'channel.update rt', 'channel.disable rt', 'channel.disable s', 'channel.remove rt', 'channel.enable s']);
      expect(JSON.stringify(audit)).not.toContain(CREDENTIAL);
    } finally {
      await store.close();
    }
    for (const r of [added, listed]) expect(r.stdout + r.stderr).not.toContain(CREDENTIAL);
  });

  it('has --help for every channels command', () => {
    for (const c of ['list', 'add', 'update', 'enable', 'disable', 'remove']) {
      const h = run('channels', c, '--help');
      expect(h.status, c).toBe(0);
      expect(h.stdout).toContain(`mediagate channels ${c}`);
    }
  });
});
