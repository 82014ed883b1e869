import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../src/config-file/loader.js';
import { embeddedDefault } from '../src/config-file/defaults.js';
import { startGateway, tempDir, type TestGateway } from './helpers/gateway.js';

// A config file can start from the embedded default (`extends: embedded`) and add to it; the
// settings a newcomer reaches for first have environment overrides; /console with the admin API off
// says how to turn it on (docs/configuration.md, docs/console.md).

describe('extends: embedded', () => {
  const dir = tempDir();
  afterAll(() => dir.remove());
  const load = (yaml: string, env: Record<string, string> = {}) => {
    const path = join(dir.path, 'mediagate.yaml');
    writeFileSync(path, yaml);
    return loadConfig({ ...env, MEDIAGATE_CONFIG: path });
  };

  it('keeps every embedded channel and model, adds a channel and switches sections on', () => {
    const base = embeddedDefault({});
    const { config, source } = load(
      [
        'extends: embedded',
        'admin: { enabled: true }',
        'webhooks: { allow_insecure: true }',
        'storage: { type: local, dir: ./videos }',
        'channels:',
        '  - { name: my-openai, type: openai, base_url: "https://api.openai.com", api_key: sk-test, models: [gpt-4o-mini] }',
        'models:',
        '  gpt-4o-mini: { kind: chat }',
      ].join('\n'),
    );
    expect(source).toContain('extends the embedded default');
    expect(config.channels.map((c) => c.name)).toEqual(['simulator', 'my-openai']);
    expect(Object.keys(config.models)).toEqual(expect.arrayContaining([...Object.keys(base.models as object), 'gpt-4o-mini']));
    expect(config.admin.enabled).toBe(true);
    expect(config.webhooks.allow_insecure).toBe(true);
    expect(config.simulator.embedded).toBe(true);
    // The default's relative paths, and the file's own, are relative to the file.
    expect(config.database.url).toBe(`sqlite:${join(dir.path, 'data', 'mediagate.db')}`);
    expect(config.storage.dir).toBe(join(dir.path, 'videos'));
  });

  it('merges a section field by field and lets a channel of the same name replace the default one', () => {
    const { config } = load('extends: embedded\nsimulator: { video_seconds: 1 }\nchannels:\n  - { name: simulator, type: simulator, models: [sim-chat] }\n');
    expect(config.simulator).toMatchObject({ embedded: true, video_seconds: 1 });
    expect(config.channels).toHaveLength(1);
    expect(config.channels[0].models).toEqual(['sim-chat']);
  });

  it('refuses any other base, naming the field', () => {
    expect(() => load('extends: production\n')).toThrow(ConfigError);
    expect(() => load('extends: production\n')).toThrow(/extends: must be "embedded"/);
  });
});

describe('environment overrides for the first hour', () => {
  it('turn the admin API and insecure local webhooks on and off, over the embedded default and a file', () => {
    const on = loadConfig({ MEDIAGATE_ADMIN_ENABLED: 'true', MEDIAGATE_WEBHOOKS_ALLOW_INSECURE: '1' }).config;
    expect(on.admin.enabled).toBe(true);
    expect(on.webhooks.allow_insecure).toBe(true);
    const off = loadConfig({ MEDIAGATE_ADMIN_ENABLED: 'false' }).config;
    expect(off.admin.enabled).toBe(false);
    expect(() => loadConfig({ MEDIAGATE_ADMIN_ENABLED: 'maybe' })).toThrow(/MEDIAGATE_ADMIN_ENABLED: must be true or false, got "maybe"/);
  });
});

describe('/console with the admin API off', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(async () => {
    await gw.close();
  });

  it('shows a browser a page on how to turn it on', async () => {
    const res = await fetch(`${gw.url}/console`, { headers: { accept: 'text/html,application/xhtml+xml' } });
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const page = await res.text();
    expect(page).toContain('MEDIAGATE_ADMIN_ENABLED=true');
    expect(page).toContain('npx mediagate admin create --name NAME');
  });

  it('answers anything else with the admin error shape saying the same', async () => {
    for (const path of ['/console', '/console/keys', '/admin/api/keys']) {
      const res = await fetch(`${gw.url}${path}`);
      expect(res.status, path).toBe(404);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('admin_disabled');
      expect(body.error.message).toContain('MEDIAGATE_ADMIN_ENABLED=true');
    }
  });
});
