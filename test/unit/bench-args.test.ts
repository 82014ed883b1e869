import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The bench's flags are checked before anything starts: a misspelt flag, phase or target stops
// the run with the usage text instead of starting a full run of about twenty-three minutes.
type Flags = { help: boolean; smoke: boolean; profile: boolean; only?: string[]; targets?: string[]; baselineRoot?: string };
const { parseBenchArgs, PHASES } = (await import('../../bench/lib/args.mjs' as string)) as { parseBenchArgs: (argv: string[]) => Flags; PHASES: string[] };
const RUN = fileURLToPath(new URL('../../bench/run.mjs', import.meta.url));

describe('the bench command line', () => {
  it('reads every known flag', () => {
    expect(parseBenchArgs([])).toEqual({ help: false, smoke: false, profile: false, only: undefined, targets: undefined, baselineRoot: undefined });
    expect(parseBenchArgs(['--smoke', '--profile', '--only=chat,streams', '--targets=raw,unlimited', '--baseline-root=/x'])).toEqual({
      help: false,
      smoke: true,
      profile: true,
      only: ['chat', 'streams'],
      targets: ['raw', 'unlimited'],
      baselineRoot: '/x',
    });
    expect(parseBenchArgs(['--only', 'poller'])).toMatchObject({ only: ['poller'] });
    expect(parseBenchArgs(['-h']).help).toBe(true);
    expect(PHASES).toContain('convert');
  });

  it('refuses an unknown flag, a missing value, an unknown phase or target and a stray argument', () => {
    expect(() => parseBenchArgs(['--bogus'])).toThrow(/bogus/);
    expect(() => parseBenchArgs(['--only'])).toThrow(/only/);
    expect(() => parseBenchArgs(['--only=stream'])).toThrow(/--only: unknown "stream"/);
    expect(() => parseBenchArgs(['--only=,'])).toThrow(/--only: no name given/);
    expect(() => parseBenchArgs(['--targets=raw,foo'])).toThrow(/--targets: unknown "foo"/);
    expect(() => parseBenchArgs(['full'])).toThrow(/unexpected argument "full"/);
  });

  it('run.mjs prints its usage for --help and exits 2 on a bad flag, starting nothing', () => {
    const help = spawnSync(process.execPath, [RUN, '--help'], { encoding: 'utf8', timeout: 30_000 });
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^Usage: node bench\/run\.mjs/);
    expect(help.stdout).toContain('--only=<phase,...>');
    expect(help.stderr).toBe('');
    const bad = spawnSync(process.execPath, [RUN, '--only=stream'], { encoding: 'utf8', timeout: 30_000 });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('bench: --only: unknown "stream"');
    expect(bad.stderr).toContain('Usage: node bench/run.mjs');
    expect(bad.stdout).toBe('');
  });
});
