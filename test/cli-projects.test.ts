import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliFixture, type CliFixture } from './helpers/cli.js';

// `mediagate projects …` and the budget options of `keys …`, through the compiled CLI.

// Ten CLI processes, each a full Node start: minutes on a loaded machine, as for the keys CLI test.
describe('mediagate projects', { timeout: 180_000 }, () => {
  let cli: CliFixture;
  beforeAll(async () => {
    cli = await cliFixture();
  });
  afterAll(async () => cli?.remove());

  it('creates, lists and updates projects; keys join one and get a budget; bad values are status 2', () => {
    const made = cli.run('projects', 'create', '--name', 'acme', '--price-ratio', '1.25', '--budget', '40', '--budget-period', 'week', '--json');
    expect(made.status, made.stderr).toBe(0);
    expect(JSON.parse(made.stdout)).toMatchObject({ name: 'acme', price_ratio: 1.25, budget_usd: '40.000000', budget_period: 'week' });

    const key = cli.run('keys', 'create', '--name', 'app', '--project', 'acme', '--budget', '2.5', '--budget-period', 'day', '--json');
    expect(key.status, key.stderr).toBe(0);
    const id = JSON.parse(key.stdout).id as string;
    const listed = JSON.parse(cli.run('keys', 'list', '--json').stdout) as Record<string, unknown>[];
    expect(listed.find((k) => k.id === id)).toMatchObject({ project: 'acme', budget: 2.5, budget_period: 'day', budget_spent: 0 });

    const updated = cli.run('projects', 'update', 'acme', '--budget', 'none');
    expect(updated.status, updated.stderr).toBe(0);
    expect(updated.stdout).toContain('budget=none');
    const projects = JSON.parse(cli.run('projects', 'list', '--json').stdout) as Record<string, unknown>[];
    expect(projects).toEqual([expect.objectContaining({ name: 'acme', keys: 1, budget_usd: null, price_ratio: 1.25 })]);

    const bad = cli.run('keys', 'update', id, '--budget-period', 'year');
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('budget_period must be one of: day, week, month');
    const ghost = cli.run('keys', 'update', id, '--project', 'ghost');
    expect(ghost.status).toBe(2);
    expect(ghost.stderr).toContain('no project named "ghost"');
    const dup = cli.run('projects', 'create', '--name', 'acme');
    expect(dup.status).toBe(1);
    expect(dup.stderr).toContain('exists already');

    const help = cli.run('projects', 'update', '--help');
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('mediagate projects update NAME|ID');
  });
});
