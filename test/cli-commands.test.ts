import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { COMMANDS, main } from '../src/main.js';
import { cliFixture, type CliFixture } from './helpers/cli.js';
import { tempDir } from './helpers/gateway.js';
import { MAIN } from './helpers/gateway-process.js';
import { eventually } from './helpers/eventually.js';

// The command line as the docs write it: --help on every command, an unknown option refused with
// that command's usage (one line saying what is wrong, then the usage line, never the whole list),
// serve's --port/--host/--config, keys update --credit.

/** Runs main() in this process with stdout and stderr captured (only for commands that return). */
async function inProcess(...argv: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const o = vi.spyOn(process.stdout, 'write').mockImplementation((c) => ((stdout += String(c)), true));
  const e = vi.spyOn(process.stderr, 'write').mockImplementation((c) => ((stderr += String(c)), true));
  try {
    const status = await main(argv);
    return { status, stdout, stderr };
  } finally {
    o.mockRestore();
    e.mockRestore();
  }
}

describe('mediagate commands and flags', () => {
  afterEach(() => vi.restoreAllMocks());

  it('answers --help on every command with its usage and options, and does nothing else', async () => {
    expect(COMMANDS.length).toBeGreaterThan(10);
    for (const { spec } of COMMANDS) {
      const r = await inProcess(...spec.name.split(' '), '--help');
      expect(r.status, spec.name).toBe(0);
      expect(r.stderr, spec.name).toBe('');
      expect(r.stdout, spec.name).toMatch(new RegExp(`^Usage: mediagate ${spec.name}\\b`));
      for (const option of Object.keys(spec.options ?? {})) expect(r.stdout, `${spec.name} --${option}`).toContain(`--${option}`);
    }
    for (const group of ['keys', 'admin']) {
      const r = await inProcess(group, '--help');
      expect(r.status).toBe(0);
      expect(r.stdout).toContain(`mediagate ${group} create`);
    }
    const all = await inProcess('--help');
    for (const { spec } of COMMANDS) expect(all.stdout).toContain(`mediagate ${spec.name}`);
  });

  it('refuses an unknown option in one line naming it, followed by that command only', async () => {
    for (const { spec } of COMMANDS) {
      const r = await inProcess(...spec.name.split(' '), '--frobnicate');
      expect(r.status, spec.name).toBe(2);
      expect(r.stdout).toBe('');
      const lines = r.stderr.trimEnd().split('\n');
      expect(lines, spec.name).toHaveLength(2);
      expect(lines[0]).toMatch(new RegExp(`^mediagate: ${spec.name}: unknown option --frobnicate`));
      expect(lines[1]).toMatch(new RegExp(`^usage: mediagate ${spec.name}\\b`));
    }
  });

  it('says in one line what is wrong: a missing command, value or argument, an unknown command', async () => {
    const cases: [string[], RegExp][] = [
      [['keys'], /^mediagate: keys: needs a command: create, list, update, credit, revoke, webhook-secret/],
      [['keys', 'frob'], /^mediagate: unknown keys command "frob": one of create, list/],
      [['frob'], /^mediagate: unknown command "frob": one of serve, keys, projects, admin, channels, usage/],
      [['keys', 'create'], /^mediagate: keys create: needs --name NAME\nusage: mediagate keys create /],
      [['keys', 'create', '--name'], /^mediagate: keys create: --name needs a value \(NAME\)/],
      [['keys', 'update'], /^mediagate: keys update: needs ID\n/],
      [['keys', 'revoke', 'a', 'b'], /^mediagate: keys revoke: unexpected argument "b" \(it takes ID\)/],
      [['keys', 'update', 'key_x', '--credit', '5'], /^mediagate: keys update: the amount must carry its sign, e\.g\. \+10/],
      [['keys', 'create', '--name', 'x', '--rpm', 'lots'], /^mediagate: keys create: --rpm must be a whole number, got "lots"/],
      [['serve', '--port', 'eighty'], /^mediagate: serve: --port must be a whole number/],
    ];
    for (const [argv, expected] of cases) {
      const r = await inProcess(...argv);
      expect(r.status, argv.join(' ')).toBe(2);
      expect(r.stderr, argv.join(' ')).toMatch(expected);
      expect(r.stderr.split('\n').length, argv.join(' ')).toBeLessThanOrEqual(3);
    }
  });
});

describe('serve flags', () => {
  it('serve --help prints its usage and starts no server', () => {
    const r = spawnSync(process.execPath, [MAIN, 'serve', '--help'], { encoding: 'utf8', timeout: 30_000, env: { ...process.env, PORT: '0' } });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^Usage: mediagate serve \[--port N\] \[--host HOST\] \[--config FILE\]/);
    expect(r.stdout).not.toContain('listening');
  });

  it('serves with --config, --port and --host, which win over MEDIAGATE_CONFIG and PORT', async () => {
    const dir = tempDir();
    const config = join(dir.path, 'mediagate.yaml');
    writeFileSync(config, 'database: { url: "sqlite:./flags.db" }\nserver: { port: 1 }\nchannels: []\nmodels: {}\n');
    const env: NodeJS.ProcessEnv = { ...process.env, MEDIAGATE_CONFIG: join(dir.path, 'missing.yaml'), PORT: '2', LOG_LEVEL: 'warn' };
    for (const k of ['DATABASE_URL', 'REDIS_URL', 'HOST']) delete env[k];
    const child = spawn(process.execPath, [MAIN, 'serve', '--config', config, '--port', '0', '--host', '127.0.0.1'], { cwd: dir.path, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c) => (out += String(c)));
    child.stderr.on('data', (c) => (out += String(c)));
    const exited = new Promise((resolve) => child.on('exit', resolve));
    try {
      await eventually(() => /listening on http:\/\/127\.0\.0\.1:\d+/.test(out), 25_000, `the banner (${out})`);
      const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out)![1];
      expect(url).not.toMatch(/:(1|2)$/);
      expect(out).toContain(`config: ${config}`);
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
    } finally {
      child.kill('SIGTERM');
      await exited;
      dir.remove();
    }
  });
});

describe('keys update --credit', () => {
  let cli: CliFixture;
  beforeAll(async () => {
    cli = await cliFixture();
  });
  afterAll(async () => {
    await cli.remove();
  });

  it('adds to and takes from the balance beside other changes, and says so when it cannot', () => {
    const { id } = JSON.parse(cli.run('keys', 'create', '--name', 'topped', '--credit', '1', '--json').stdout) as { id: string };
    const up = cli.run('keys', 'update', id, '--credit', '+2.5', '--rpm', '30', '--json');
    expect(up.stderr).toBe('');
    expect(JSON.parse(up.stdout)).toMatchObject({ id, credit_usd: '3.500000', rpm: 30 });
    const down = cli.run('keys', 'update', id, '--credit=-0.5');
    expect(down.status).toBe(0);
    expect(down.stdout).toContain('credit=$3.000000');
    const tooMuch = cli.run('keys', 'update', id, '--credit', '-10', '--name', 'renamed');
    expect(tooMuch.status).toBe(1);
    expect(tooMuch.stderr).toMatch(/has \$3\.000000 left; cannot take \$10\.000000.*\(the other changes were saved\)/);
    const [key] = (JSON.parse(cli.run('keys', 'list', '--json').stdout) as Array<{ id: string; name: string; credit: number }>).filter((k) => k.id === id);
    expect(key).toMatchObject({ name: 'renamed', credit: 3 });
  });
});
