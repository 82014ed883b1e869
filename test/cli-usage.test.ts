import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliFixture, type CliFixture } from './helpers/cli.js';
import { openStore } from '../src/store/db.js';
import { UsageRepo } from '../src/store/repos/usage.js';
import { KeysRepo } from '../src/store/repos/keys.js';
import { Authenticator } from '../src/auth/authenticator.js';
import { RateLimits } from '../src/limits/rate-limits.js';
import { MemoryLimitStore } from '../src/limits/memory-store.js';
import { validateConfig } from '../src/config-file/loader.js';

describe('mediagate usage and key limits (CLI)', { timeout: 120_000 }, () => {
  let cli: CliFixture;
  const run = (...args: string[]) => cli.run(...args);

  beforeAll(async () => {
    cli = await cliFixture();
    const store = await openStore(cli.dbUrl);
    try {
      const base = { channel: 's', endpoint: 'chat', status: 200, latency_ms: 3 };
      await new UsageRepo(store.db).insertMany([
        { ...base, key_id: 'key_a', model: 'sim-chat', input_units: 100, output_units: 20, cost_micros: 1_500_000, created_at: Date.parse('2026-03-01T00:00:00Z') },
        { ...base, key_id: 'key_a', model: 'sim-chat', input_units: 50, output_units: 10, cost_micros: 500_000, overage_micros: 120_000, created_at: Date.parse('2026-03-02T00:00:00Z') },
        { ...base, key_id: 'key_a', model: 'sim-image', input_units: 0, output_units: 2, cost_micros: 40_000, created_at: Date.parse('2026-03-02T00:00:00Z') },
        { ...base, key_id: 'key_b', model: 'sim-chat', status: 429, input_units: 0, output_units: 0, cost_micros: 0, created_at: Date.parse('2026-03-03T00:00:00Z') },
      ]);
      // key_a has a name (shown beside its id); key_b is no longer in the key table.
      await new KeysRepo(store.db).create({ name: 'app-one', keyHash: 'h'.repeat(64), keyPrefix: 'mg-test' });
      await store.db.updateTable('api_keys').set({ id: 'key_a' }).where('name', '=', 'app-one').execute();
    } finally {
      await store.close();
    }
  });
  afterAll(async () => {
    await cli.remove();
  });

  it('prints totals per key and model, as a table and as JSON', () => {
    const table = run('usage');
    expect(table.status).toBe(0);
    const lines = table.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^KEY\s+NAME\s+MODEL\s+REQUESTS\s+INPUT\s+OUTPUT\s+COST\s+OVERAGE$/);
    expect(lines[1]).toMatch(/^key_a\s+app-one\s+sim-chat\s+2\s+150\s+30\s+\$2\.000000\s+\$0\.120000$/);
    expect(lines[2]).toMatch(/^key_a\s+app-one\s+sim-image\s+1\s+0\s+2\s+\$0\.040000\s+\$0\.000000$/);
    expect(lines[3]).toMatch(/^key_b\s+-\s+sim-chat\s+1\s+0\s+0\s+\$0\.000000\s+\$0\.000000$/);
    expect(lines[4]).toMatch(/^TOTAL\s+4\s+150\s+32\s+\$2\.040000\s+\$0\.120000$/);

    const json = JSON.parse(run('usage', '--json').stdout);
    expect(json.rows).toHaveLength(3);
    expect(json.rows[0]).toEqual({ key_id: 'key_a', key_name: 'app-one', model: 'sim-chat', requests: 2, input_units: 150, output_units: 30, cost_micros: 2_000_000, cost_usd: 2, overage_micros: 120_000, overage_usd: 0.12 });
    expect(json.total).toEqual({ requests: 4, input_units: 150, output_units: 32, cost_micros: 2_040_000, cost_usd: 2.04, overage_micros: 120_000, overage_usd: 0.12 });
  });

  it('filters by key and by time', () => {
    const byKey = JSON.parse(run('usage', '--key', 'key_b', '--json').stdout);
    expect(byKey.rows.map((r: { key_id: string }) => r.key_id)).toEqual(['key_b']);
    const since = JSON.parse(run('usage', '--since', '2026-03-02T00:00:00Z', '--json').stdout);
    expect(since.since).toBe('2026-03-02T00:00:00.000Z');
    expect(since.total).toMatchObject({ requests: 3, cost_micros: 540_000 });
    const none = run('usage', '--key', 'key_zzz');
    expect(none.status).toBe(0);
    expect(none.stdout).toContain('No usage recorded');
    expect(run('usage', '--since', 'last week').status).toBe(2);
    expect(run('usage', '--frobnicate').status).toBe(2);
  });

  it('creates keys whose rpm, concurrency and credit the gateway enforces, and tops up only limited keys', async () => {
    const created = run('keys', 'create', '--name', 'limited', '--rpm', '2', '--concurrency', '1', '--credit', '0.25', '--json');
    expect(created.status).toBe(0);
    const { id, key } = JSON.parse(created.stdout) as { id: string; key: string };
    const unlimited = JSON.parse(run('keys', 'create', '--name', 'free', '--json').stdout) as { id: string };

    const store = await openStore(cli.dbUrl);
    try {
      const principal = await new Authenticator(new KeysRepo(store.db)).authenticate(key);
      expect(principal).toMatchObject({ keyId: id, rpm: 2, concurrency: 1, limitedCredit: true });
      const limits = new RateLimits(new MemoryLimitStore(), validateConfig({}, 'test'));
      const first = await limits.admitKey(principal!);
      // One in flight at a time; the refused second request spends none of the 2 per minute.
      await expect(limits.admitKey(principal!)).rejects.toMatchObject({ status: 429, code: 'rate_limit_exceeded' });
      first.slot!.release();
      (await limits.admitKey(principal!)).slot!.release();
      await expect(limits.admitKey(principal!)).rejects.toMatchObject({ status: 429, headers: { 'x-ratelimit-limit': '2' } });
    } finally {
      await store.close();
    }

    const topped = run('keys', 'credit', id, '+1');
    expect(topped.status).toBe(0);
    expect(topped.stdout).toContain('$1.250000');
    const refused = run('keys', 'credit', unlimited.id, '+1');
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain('unlimited');
    expect(run('keys', 'credit', id, 'ten').status).toBe(2);
    expect(run('keys', 'credit', id, '0').status).toBe(2);
  });
});
