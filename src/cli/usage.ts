import { parseCommand, UsageError, wholeNumber, type CommandSpec } from './args.js';
import type { Config } from '../config/schema.js';
import { KeysRepo } from '../store/repos/keys.js';
import { UsageReportsRepo } from '../store/repos/usage-reports.js';
import { UsageAdmin } from '../admin/usage.js';
import { UsageRepo, type UsageTotal } from '../store/repos/usage.js';
import { CONFIG_OPTION, JSON_OPTION, configFor, microsToUsd, out, withStore } from './common.js';

// `mediagate usage`: the usage ledger per key and model, or its last rows.

export const usageSpec = {
  name: 'usage',
  summary: 'Requests, units and cost per key and model, from the usage ledger.',
  options: {
    key: { type: 'string', arg: 'ID', help: 'one key only' },
    since: { type: 'string', arg: 'ISO-8601', help: 'only what happened from this time on' },
    rows: { type: 'string', arg: 'N', help: 'the N newest requests, each with what it was billed by, instead of totals' },
    ...JSON_OPTION,
    ...CONFIG_OPTION,
  },
} satisfies CommandSpec;

/** `usage --rows N`: single ledger rows, newest first, with the price rule each was billed by. */
export async function usageRows(config: Config, values: { key?: string; json?: boolean }, limit: number, sinceMs: number | undefined): Promise<void> {
  if (limit < 1 || limit > 1000) throw new UsageError('usage: --rows must be from 1 to 1000', usageSpec);
  const q: Record<string, string> = { limit: String(limit) };
  if (values.key !== undefined) q.key = values.key;
  if (sinceMs !== undefined) q.from = new Date(sinceMs).toISOString();
  const page = await withStore(config, (s) => new UsageAdmin(new UsageReportsRepo(s.db), new UsageRepo(s.db)).page(q), { mustExist: true });
  if (values.json) return out(JSON.stringify({ rows: page.data }));
  if (!page.data.length) return out('No usage recorded.');
  const table = [['TIME', 'KEY', 'MODEL', 'ENDPOINT', 'STATUS', 'COST', 'BILLED BY'], ...page.data.map((r) => [r.created_at, r.key_id, r.model || '-', r.endpoint, String(r.status), `$${r.cost_usd}`, r.billed_by || '-'])];
  const widths = table[0].map((_, i) => Math.max(...table.map((row) => row[i].length)));
  for (const row of table) out(row.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd());
}

export async function usageCommand(argv: string[]): Promise<void> {
  const { values } = parseCommand(usageSpec, argv);
  const { config } = configFor(values);
  let sinceMs: number | undefined;
  if (values.since !== undefined) {
    sinceMs = Date.parse(values.since);
    if (!Number.isFinite(sinceMs)) throw new UsageError(`usage: --since must be an ISO-8601 time, got "${values.since}"`, usageSpec);
  }
  const rowCount = wholeNumber(usageSpec, 'rows', values.rows);
  if (rowCount !== undefined) return usageRows(config, values, rowCount, sinceMs);
  const { rows, names } = await withStore(
    config,
    async (s) => ({
      rows: await new UsageAdmin(new UsageReportsRepo(s.db), new UsageRepo(s.db)).totals({ keyId: values.key, sinceMs }),
      names: new Map((await new KeysRepo(s.db).list()).map((k) => [k.id, k.name])),
    }),
    { mustExist: true },
  );
  const total = rows.reduce(
    (t, r) => ({
      requests: t.requests + r.requests,
      input_units: t.input_units + r.input_units,
      output_units: t.output_units + r.output_units,
      cost_micros: t.cost_micros + r.cost_micros,
      overage_micros: t.overage_micros + r.overage_micros,
    }),
    { requests: 0, input_units: 0, output_units: 0, cost_micros: 0, overage_micros: 0 },
  );
  const usd = (m: number) => m / 1_000_000;
  if (values.json) {
    return out(
      JSON.stringify({
        key: values.key ?? null,
        since: sinceMs === undefined ? null : new Date(sinceMs).toISOString(),
        rows: rows.map((r) => ({ ...r, key_name: names.get(r.key_id) ?? null, cost_usd: usd(r.cost_micros), overage_usd: usd(r.overage_micros) })),
        total: { ...total, cost_usd: usd(total.cost_micros), overage_usd: usd(total.overage_micros) },
      }),
    );
  }
  if (!rows.length) return out('No usage recorded' + (values.key ? ` for ${values.key}` : '') + (values.since ? ` since ${values.since}` : '') + '.');
  // OVERAGE: the part of COST that neither the holds nor the balance covered (what the key owes or owed).
  const table: string[][] = [['KEY', 'NAME', 'MODEL', 'REQUESTS', 'INPUT', 'OUTPUT', 'COST', 'OVERAGE']];
  const line = (key: string, name: string, model: string, r: Omit<UsageTotal, 'key_id' | 'model'>) => [
    key,
    name,
    model,
    String(r.requests),
    String(r.input_units),
    String(r.output_units),
    microsToUsd(r.cost_micros),
    microsToUsd(r.overage_micros),
  ];
  // Requests refused before a model was read (key rate limits) have no model.
  for (const r of rows) table.push(line(r.key_id, names.get(r.key_id) ?? '-', r.model || '-', r));
  table.push(line('TOTAL', '', '', total));
  const widths = table[0].map((_, i) => Math.max(...table.map((row) => row[i].length)));
  for (const row of table) out(row.map((c, i) => (i >= 3 ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join('  ').trimEnd());
}
