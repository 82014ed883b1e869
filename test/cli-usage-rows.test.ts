import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliFixture, type CliFixture } from './helpers/cli.js';
import { openStore } from '../src/store/db.js';
import { UsageRepo } from '../src/store/repos/usage.js';
import { UsageReportsRepo } from '../src/store/repos/usage-reports.js';
import { UsageAdmin } from '../src/admin/usage.js';

// `mediagate usage --rows N` and the admin usage page: single ledger rows, newest first, each with
// what it was billed by.

describe('usage rows with what each was billed by', { timeout: 120_000 }, () => {
  let cli: CliFixture;
  beforeAll(async () => {
    cli = await cliFixture();
    const store = await openStore(cli.dbUrl);
    try {
      const base = { channel: 's', status: 200, input_units: 0, latency_ms: 3 };
      await new UsageRepo(store.db).insertMany([
        { ...base, key_id: 'key_a', model: 'sim-chat', endpoint: 'chat', output_units: 20, cost_micros: 1_500, billed_by: '100 input tokens × $0.5/M + 20 output tokens × $1.5/M', created_at: Date.parse('2026-03-01T00:00:00Z') },
        { ...base, key_id: 'key_a', model: 'sim-image', endpoint: 'images.generations', output_units: 2, cost_micros: 30_000, billed_by: '2 images × $0.02 (1024x1024) × 0.75 (batch)', created_at: Date.parse('2026-03-02T00:00:00Z') },
        { ...base, key_id: 'key_b', model: 'sim-chat', endpoint: 'chat', status: 429, output_units: 0, cost_micros: 0, created_at: Date.parse('2026-03-03T00:00:00Z') },
      ]);
      const page = await new UsageAdmin(new UsageReportsRepo(store.db), new UsageRepo(store.db)).page({ key: 'key_a' });
      expect(page.data.map((r) => r.billed_by)).toEqual(['2 images × $0.02 (1024x1024) × 0.75 (batch)', '100 input tokens × $0.5/M + 20 output tokens × $1.5/M']);
    } finally {
      await store.close();
    }
  });
  afterAll(async () => cli?.remove());

  it('prints the newest rows with a BILLED BY column, as a table and as JSON', () => {
    const table = cli.run('usage', '--rows', '2');
    expect(table.status, table.stderr).toBe(0);
    const lines = table.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^TIME\s+KEY\s+MODEL\s+ENDPOINT\s+STATUS\s+COST\s+BILLED BY$/);
    expect(lines[1]).toMatch(/^2026-03-03T00:00:00\.000Z\s+key_b\s+sim-chat\s+chat\s+429\s+\$0\.000000\s+-$/);
    expect(lines[2]).toMatch(/^2026-03-02T00:00:00\.000Z\s+key_a\s+sim-image\s+images\.generations\s+200\s+\$0\.030000\s+2 images × \$0\.02 \(1024x1024\) × 0\.75 \(batch\)$/);
    expect(lines).toHaveLength(3);

    const json = JSON.parse(cli.run('usage', '--rows', '5', '--key', 'key_a', '--since', '2026-03-01T12:00:00Z', '--json').stdout);
    expect(json.rows).toHaveLength(1);
    expect(json.rows[0]).toMatchObject({ key_id: 'key_a', model: 'sim-image', cost_usd: '0.030000', billed_by: '2 images × $0.02 (1024x1024) × 0.75 (batch)' });
  });

  it('refuses a row count outside 1 to 1000', () => {
    for (const n of ['0', '1001', 'ten']) {
      const r = cli.run('usage', '--rows', n);
      expect(r.status).toBe(2);
      expect(r.stderr).toMatch(/--rows/);
    }
  });
});
