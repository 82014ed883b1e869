import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliFixture, type CliFixture } from './helpers/cli.js';
import { tempDir } from './helpers/gateway.js';
import { testDialect } from './helpers/databases.js';

const MAIN = join(__dirname, '..', 'dist', 'main.js');

describe('mediagate CLI arguments', { timeout: 120_000 }, () => {
  let cli: CliFixture;
  beforeAll(async () => {
    cli = await cliFixture();
  });
  afterAll(async () => {
    await cli.remove();
  });

  it('reads a negative amount after the key id as an amount, and never takes a balance below zero', () => {
    const { id } = JSON.parse(cli.run('keys', 'create', '--name', 'neg', '--credit', '10', '--json').stdout) as { id: string };
    const taken = cli.run('keys', 'credit', id, '-2.5');
    expect(taken.stderr).toBe('');
    expect(taken.status).toBe(0);
    expect(taken.stdout).toContain('$7.500000');
    const tooMuch = cli.run('keys', 'credit', id, '-100');
    expect(tooMuch.status).toBe(1);
    expect(tooMuch.stderr).toContain('$7.500000 left');
    const list = JSON.parse(cli.run('keys', 'list', '--json').stdout) as Array<{ id: string; credit: number }>;
    expect(list.find((k) => k.id === id)?.credit).toBe(7.5);
  });

  it('refuses a second active key of the same name unless --allow-duplicate-name', () => {
    const first = cli.run('keys', 'create', '--name', 'twin', '--json');
    expect(first.status).toBe(0);
    const second = cli.run('keys', 'create', '--name', 'twin', '--json');
    expect(second.status).toBe(1);
    expect(second.stderr).toContain('--allow-duplicate-name');
    expect(second.stdout).not.toMatch(/mg-/);
    const forced = cli.run('keys', 'create', '--name', 'twin', '--allow-duplicate-name', '--json');
    expect(forced.status).toBe(0);
    const twins = (JSON.parse(cli.run('keys', 'list', '--json').stdout) as Array<{ name: string }>).filter((k) => k.name === 'twin');
    expect(twins).toHaveLength(2);
  });

  it('prints the version of package.json', () => {
    const r = cli.run('--version');
    expect(r.status).toBe(0);
    const { version } = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as { version: string };
    expect(r.stdout.trim()).toBe(`mediagate ${version}`);
  });
});

describe.skipIf(testDialect() === 'postgres')('mediagate CLI from another directory (SQLite)', () => {
  const project = tempDir();
  const elsewhere = tempDir();
  const configPath = join(project.path, 'mediagate.yaml');
  const env = (extra: Record<string, string> = {}) => {
    const e: NodeJS.ProcessEnv = { ...process.env, ...extra };
    for (const k of ['DATABASE_URL', 'MEDIAGATE_CONFIG']) if (!(k in extra)) delete e[k];
    return e;
  };
  const run = (cwd: string, extra: Record<string, string>, ...args: string[]) => spawnSync(process.execPath, [MAIN, ...args], { cwd, env: env(extra), encoding: 'utf8', timeout: 20000 });
  afterAll(() => {
    project.remove();
    elsewhere.remove();
  });

  it('finds the database of a config file relative to the file, wherever it runs', () => {
    writeFileSync(configPath, 'database: { url: "sqlite:./data/app.db" }\nchannels: []\nmodels: {}\n');
    const created = run(project.path, { MEDIAGATE_CONFIG: configPath }, 'keys', 'create', '--name', 'here', '--json');
    expect(created.status).toBe(0);
    expect(created.stderr).toBe(`mediagate: created a new, empty database at ${join(project.path, 'data', 'app.db')}\n`);
    expect(run(project.path, { MEDIAGATE_CONFIG: configPath }, 'keys', 'create', '--name', 'there', '--json').stderr).toBe('');
    expect(existsSync(join(project.path, 'data', 'app.db'))).toBe(true);
    const listed = run(elsewhere.path, { MEDIAGATE_CONFIG: configPath }, 'keys', 'list', '--json');
    expect(listed.status).toBe(0);
    expect((JSON.parse(listed.stdout) as Array<{ name: string }>).map((k) => k.name)).toEqual(['here', 'there']);
    expect(existsSync(join(elsewhere.path, 'data'))).toBe(false);
  });

  it('refuses to create an empty database for read commands', () => {
    for (const args of [['keys', 'list'], ['usage'], ['keys', 'credit', 'key_x', '+1'], ['keys', 'revoke', 'key_x']]) {
      const r = run(elsewhere.path, {}, ...args);
      expect(r.status, args.join(' ')).toBe(1);
      expect(r.stderr).toContain('no database at ./data/mediagate.db');
      expect(existsSync(join(elsewhere.path, 'data', 'mediagate.db'))).toBe(false);
    }
  });
});
