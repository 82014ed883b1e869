import { describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig, validateConfig } from '../src/config-file/loader.js';
import { tempDir } from './helpers/gateway.js';

// A config mistake is reported so that the operator can fix it without reading the source:
// allowed values listed, the YAML parser's whole message (line, column, caret), the file and field
// of an unset ${VAR}.

function messageOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('expected an error');
}

function inFile<T>(text: string, fn: (path: string, dir: string) => T): T {
  const dir = tempDir();
  try {
    const p = join(dir.path, 'mediagate.yaml');
    writeFileSync(p, text);
    return fn(p, dir.path);
  } finally {
    dir.remove();
  }
}

describe('configuration error messages', () => {
  it('lists the allowed channel types and the value given', () => {
    const m = messageOf(() => validateConfig({ channels: [{ name: 'a', type: 'opnai', base_url: 'http://x', models: ['m'] }], models: { m: { kind: 'chat' } } }));
    expect(m).toMatch(/channels\[0\]\.type: must be one of /);
    for (const t of ['openai', 'anthropic', 'ark', 'simulator']) expect(m).toContain(t);
    expect(m).toContain('"opnai"');
    expect(m).not.toContain('Expected union value');
    expect(messageOf(() => validateConfig({ models: { m: { kind: 'audio' } } }))).toMatch(/models\.m\.kind: must be one of chat, image, video \(got "audio"\)/);
  });

  it('prints the whole YAML syntax error with its line and a caret', () => {
    const m = inFile('server:\n  port: 8080\nchannels: [unclosed\nmodels: {}\n', (p) => messageOf(() => loadConfig({ MEDIAGATE_CONFIG: p })));
    expect(m).toMatch(/mediagate\.yaml: not valid YAML: /);
    expect(m).toMatch(/line \d+, column \d+/);
    expect(m).toContain('^');
    expect(m.split('\n').length).toBeGreaterThan(1);
  });

  it('names the file and the field of an unset ${VAR}', () => {
    const text = 'channels:\n  - { name: o, type: openai, base_url: "https://api.openai.com/v1", api_key: "${MG_TEST_UNSET_KEY}", models: [m] }\nmodels:\n  m: { kind: chat }\n';
    inFile(text, (p) => {
      const m = messageOf(() => loadConfig({ MEDIAGATE_CONFIG: p }));
      expect(m.startsWith(`${p}: channels[0].api_key: environment variable MG_TEST_UNSET_KEY is not set`)).toBe(true);
    });
  });

  it('reads a relative sqlite path in a config file relative to that file, not to the working directory', () => {
    inFile('database: { url: "sqlite:./data/app.db" }\n', (p, dir) => {
      expect(loadConfig({ MEDIAGATE_CONFIG: p }).config.database.url).toBe(`sqlite:${join(dir, 'data', 'app.db')}`);
      // The environment override is the operator's own path, taken as given.
      expect(loadConfig({ MEDIAGATE_CONFIG: p, DATABASE_URL: 'sqlite:./x.db' }).config.database.url).toBe('sqlite:./x.db');
    });
  });
});
