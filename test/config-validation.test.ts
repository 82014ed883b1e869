import { describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { loadConfig, validateConfig, ConfigError } from '../src/config-file/loader.js';
import { tempDir } from './helpers/gateway.js';

const MAIN = join(__dirname, '..', 'dist', 'main.js');

function withFile(text: string, fn: (path: string) => void) {
  const dir = tempDir();
  try {
    const p = join(dir.path, 'mediagate.yaml');
    writeFileSync(p, text);
    fn(p);
  } finally {
    dir.remove();
  }
}

describe('configuration', () => {
  it('stops start-up with exit status 2 and a message naming the bad field', () => {
    withFile('server:\n  port: "eighty"\n', (p) => {
      const r = spawnSync(process.execPath, [MAIN, 'serve'], { env: { ...process.env, MEDIAGATE_CONFIG: p }, encoding: 'utf8', timeout: 20000 });
      expect(r.status).toBe(2);
      expect(r.stderr).toContain('server.port');
      expect(r.stderr.trim().split('\n').length).toBe(1);
    });
  });

  it('names a wrong field inside a channel', () => {
    expect(() =>
      validateConfig({ channels: [{ name: 'a', type: 'opnai', base_url: 'http://x', models: ['m'] }], models: { m: { kind: 'chat' } } }),
    ).toThrow(/channels\[0\]\.type/);
    expect(() => validateConfig({ channels: [{ name: 'a', type: 'openai', base_url: 'http://x', models: ['m'] }], models: {} })).toThrow(
      /channels\[0\]\.models\[0\]: model "m" is not declared/,
    );
    expect(() => validateConfig({ models: { v: { kind: 'video' } } })).toThrow(/models\.v\.modes/);
    expect(() => validateConfig({ surprise: 1 })).toThrow(/surprise: unknown field/);
    expect(() => validateConfig({ channels: [{ name: 'a', type: 'openai', models: ['m'] }], models: { m: { kind: 'chat' } } })).toThrow(
      /channels\[0\]\.base_url/,
    );
  });

  it('interpolates ${VAR}, applies env overrides and reports a missing variable', () => {
    withFile(
      'channels:\n  - { name: o, type: openai, base_url: "https://api.openai.com/v1", api_key: "${MY_KEY}", models: [m] }\nmodels:\n  m: { kind: chat, owned_by: "${OWNER:-openai}" }\n',
      (p) => {
        const { config } = loadConfig({ MEDIAGATE_CONFIG: p, MY_KEY: 'sk-abc', PORT: '9999', DATABASE_URL: 'sqlite::memory:' });
        expect(config.channels[0].api_key).toBe('sk-abc');
        expect(config.models.m.owned_by).toBe('openai');
        expect(config.server.port).toBe(9999);
        expect(config.database.url).toBe('sqlite::memory:');
        expect(() => loadConfig({ MEDIAGATE_CONFIG: p })).toThrow(/channels\[0\]\.api_key: environment variable MY_KEY is not set/);
      },
    );
  });

  it('builds the embedded default with one real channel per provider key present', () => {
    const plain = loadConfig({}).config;
    expect(plain.channels.map((c) => c.type)).toEqual(['simulator']);
    expect(plain.database.url).toBe('sqlite:./data/mediagate.db');
    expect(plain.server.port).toBe(8080);
    const full = loadConfig({ OPENAI_API_KEY: 'sk-x', ANTHROPIC_API_KEY: 'sk-ant-x', ARK_API_KEY: 'ark-x' }).config;
    expect(full.channels.map((c) => c.type).sort()).toEqual(['anthropic', 'ark', 'openai', 'simulator']);
  });

  it('rejects an unreadable or non-mapping file', () => {
    expect(() => loadConfig({ MEDIAGATE_CONFIG: '/nonexistent/mediagate.yaml' })).toThrow(ConfigError);
    withFile('- a\n- b\n', (p) => expect(() => loadConfig({ MEDIAGATE_CONFIG: p })).toThrow(/YAML mapping/));
    withFile('server: [unclosed\n', (p) => expect(() => loadConfig({ MEDIAGATE_CONFIG: p })).toThrow(/not valid YAML/));
  });
});
