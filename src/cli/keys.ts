import { parseCommand, UsageError, wholeNumber, type CommandSpec } from './args.js';
import { KeysRepo } from '../store/repos/keys.js';
import { GatewayError } from '../http/errors.js';
import type { KeyInput, KeyView } from '../admin/keys.js';
import { WebhookSecretsRepo } from '../store/repos/webhook-secrets.js';
import { newWebhookSecret } from '../tasks/webhooks/signing.js';
import { CONFIG_OPTION, JSON_OPTION, adminOn, asCommand, budgetText, configFor, out, tellInstances, withStore } from './common.js';

// `mediagate keys …`: create, list, update, credit, revoke, webhook-secret.

export function keyLine(k: KeyView): string {
  const credit = k.credit_usd === null ? 'unlimited' : `$${k.credit_usd}${Number(k.held_usd) ? ` (+$${k.held_usd} held)` : ''}${Number(k.leased_usd) ? `  leased=$${k.leased_usd}` : ''}`;
  return `${k.id}  ${k.name}  ${k.prefix}  ${k.status}  models=${k.models ? k.models.join(',') : '*'}  rpm=${k.rpm || '-'}  concurrency=${k.concurrency || '-'}  credit=${credit}${Number(k.owes_usd) > 0 ? `  owes=$${k.owes_usd}` : ''}${k.project ? `  project=${k.project}` : ''}${budgetText(k)}${k.expires_at ? '  expires=' + k.expires_at : ''}`;
}

export const keyFields = {
  name: { type: 'string', arg: 'NAME', help: 'a name to tell the key apart in lists and usage' },
  models: { type: 'string', arg: 'a,b', help: 'the models the key may use (default: every model)' },
  expires: { type: 'string', arg: 'ISO-8601', help: 'when the key stops working (default: never)' },
  rpm: { type: 'string', arg: 'N', help: 'requests per minute (0: no limit)' },
  concurrency: { type: 'string', arg: 'N', help: 'requests and tasks at once (0: no limit)' },
  project: { type: 'string', arg: 'NAME', help: 'the project the key belongs to (its price ratio and budget apply)' },
  budget: { type: 'string', arg: 'USD', help: 'what the key may spend per --budget-period' },
  'budget-period': { type: 'string', arg: 'day|week|month', help: 'the calendar window the budget resets by' },
} as const;

export const keysCreate = {
  name: 'keys create',
  summary: 'Create an API key (mg-…); the key is printed once.',
  options: {
    ...keyFields,
    name: { ...keyFields.name, required: true },
    credit: { type: 'string', arg: 'USD', help: 'a balance in USD the key spends (default: unlimited)' },
    'allow-duplicate-name': { type: 'boolean', help: 'another active key may already carry NAME' },
    ...JSON_OPTION,
    ...CONFIG_OPTION,
  },
} satisfies CommandSpec;

export const keysUpdate = {
  name: 'keys update',
  summary: 'Change a key: only the options given change. --models "*" allows every model again, --expires never removes the expiry.',
  args: ['ID'],
  options: {
    ...keyFields,
    models: { ...keyFields.models, arg: 'a,b|*' },
    expires: { ...keyFields.expires, arg: 'ISO-8601|never' },
    project: { ...keyFields.project, arg: 'NAME|none' },
    budget: { ...keyFields.budget, arg: 'USD|none' },
    credit: { type: 'string', arg: '+USD|-USD', help: 'add to (or take from) the balance, as keys credit does' },
    ...JSON_OPTION,
    ...CONFIG_OPTION,
  },
} satisfies CommandSpec;

export const keysList = { name: 'keys list', summary: 'List every key with its limits, balance and status.', options: { ...JSON_OPTION, ...CONFIG_OPTION } } satisfies CommandSpec;
export const keysRevoke = { name: 'keys revoke', summary: 'Revoke a key; running instances stop accepting it within 2 s.', args: ['ID'], options: { ...CONFIG_OPTION } } satisfies CommandSpec;
export const keysCredit = {
  name: 'keys credit',
  summary: 'Add to (+USD) or take from (-USD) a key\'s balance; a balance never goes below zero.',
  args: ['ID', '+USD|-USD'],
  options: { ...CONFIG_OPTION },
} satisfies CommandSpec;
export const keysWebhookSecret = {
  name: 'keys webhook-secret',
  summary: 'Make (or rotate) the key\'s webhook signing secret (whsec_…); printed once.',
  args: ['ID'],
  options: { ...JSON_OPTION, ...CONFIG_OPTION },
} satisfies CommandSpec;

export function keyInput(spec: CommandSpec, values: { name?: string; models?: string; expires?: string; rpm?: string; concurrency?: string; project?: string; budget?: string; 'budget-period'?: string }): KeyInput {
  for (const n of ['rpm', 'concurrency'] as const) wholeNumber(spec, n, values[n]);
  const input: KeyInput = {};
  if (values.name !== undefined) input.name = values.name;
  // --models "" (or "*") on update allows every model again.
  if (values.models !== undefined) input.models = values.models === '' || values.models === '*' ? null : values.models;
  if (values.rpm !== undefined) input.rpm = values.rpm;
  if (values.concurrency !== undefined) input.concurrency = values.concurrency;
  // --expires never (on update) removes the expiry.
  if (values.expires !== undefined) input.expires_at = values.expires === 'never' ? null : values.expires;
  // --project none / --budget none (on update) take the key out of its project / remove its budget.
  if (values.project !== undefined) input.project = values.project === 'none' ? null : values.project;
  Object.assign(input, budgetInput(values));
  return input;
}

/** --budget USD|none and --budget-period as the admin service's budget fields. */
export function budgetInput(values: { budget?: string; 'budget-period'?: string }): { budget_usd?: string | null; budget_period?: string } {
  const input: { budget_usd?: string | null; budget_period?: string } = {};
  if (values.budget !== undefined) input.budget_usd = values.budget === 'none' ? null : values.budget;
  if (values['budget-period'] !== undefined) input.budget_period = values['budget-period'];
  return input;
}

/** A signed amount of USD as `keys credit` and `keys update --credit` take it. */
export function signedUsd(spec: CommandSpec, amount: string): string {
  if (!/^[+-]\d+(\.\d+)?$/.test(amount)) throw new UsageError(`${spec.name}: the amount must carry its sign, e.g. +10 to add or -2.5 to take away (got "${amount}")`, spec);
  return amount;
}

export function creditLine(id: string, key: KeyView): string {
  return `Credit of ${id} is now $${key.credit_usd}${Number(key.held_usd) ? ` ($${key.held_usd} more held by running requests)` : ''}.`;
}

export async function keysCreateCommand(argv: string[]): Promise<void> {
  const { values } = parseCommand(keysCreate, argv);
  const { config } = configFor(values);
  const input = keyInput(keysCreate, values);
  if (values.credit !== undefined) input.credit_usd = values.credit;
  const { key, secret } = await withStore(config, (s) =>
    asCommand(async () => {
      const a = adminOn(config, s);
      const made = await a.keys.create(input, { allowDuplicateName: values['allow-duplicate-name'] });
      await a.record('key.create', made.key.id, { name: made.key.name });
      return made;
    }),
  );
  if (values.json) return out(JSON.stringify({ id: key.id, name: key.name, key: secret }));
  out(`Created key ${key.id} (${key.name}). It is shown only this once:`);
  out(`  ${secret}`);
}

export async function keysUpdateCommand(argv: string[]): Promise<void> {
  const { values, positionals } = parseCommand(keysUpdate, argv);
  const { config } = configFor(values);
  const id = positionals[0];
  const input = keyInput(keysUpdate, values);
  const credit = values.credit === undefined ? undefined : signedUsd(keysUpdate, values.credit);
  if (!Object.keys(input).length && credit === undefined) {
    throw new UsageError('keys update: needs at least one of --name, --models, --rpm, --concurrency, --expires, --project, --budget, --budget-period, --credit', keysUpdate);
  }
  const key = await withStore(
    config,
    (s) =>
      asCommand(async () => {
        const a = adminOn(config, s);
        let k = Object.keys(input).length ? await a.keys.update(id, input) : await a.keys.get(id);
        if (Object.keys(input).length) await a.record('key.update', id, { ...input });
        if (credit !== undefined) {
          k = await a.keys.credit(id, credit).catch((err: unknown) => {
            if (err instanceof GatewayError && Object.keys(input).length) err.message += ' (the other changes were saved)';
            throw err;
          });
          await a.record('key.credit', id, { usd: credit, balance_usd: k.credit_usd });
        }
        return k;
      }),
    { mustExist: true },
  );
  if (values.json) out(JSON.stringify(key));
  else out(`Updated ${keyLine(key)}`);
  return tellInstances(config, 'keys', { key_id: id });
}

export async function keysListCommand(argv: string[]): Promise<void> {
  const { values } = parseCommand(keysList, argv);
  const { config } = configFor(values);
  const keys = await withStore(config, (s) => adminOn(config, s).keys.all(), { mustExist: true });
  if (values.json) {
    return out(
      JSON.stringify(
        keys.map((k) => ({
          id: k.id,
          name: k.name,
          prefix: k.prefix,
          models: k.models,
          rpm: k.rpm,
          concurrency: k.concurrency,
          // Spendable balance and what running requests and tasks hold, apart (USD).
          credit: k.credit_usd === null ? null : Number(k.credit_usd),
          held: Number(k.held_usd),
          // In running instances' credit leases: the key's money, kept in memory (docs/limits.md).
          leased: Number(k.leased_usd),
          // Real costs beyond hold and balance; the key is refused until a top-up pays it.
          owes: Number(k.owes_usd),
          project: k.project,
          // The key's own budget (USD per period) and the current window's spend; null without one.
          budget: k.budget_usd === null ? null : Number(k.budget_usd),
          budget_period: k.budget_period,
          budget_spent: k.budget_spent_usd === null ? null : Number(k.budget_spent_usd),
          budget_held: k.budget_held_usd === null ? null : Number(k.budget_held_usd),
          budget_resets_at: k.budget_resets_at,
          expires_at: k.expires_at,
          revoked: k.status === 'revoked',
          created_at: k.created_at,
        })),
      ),
    );
  }
  if (!keys.length) return out('No keys. Create one with: npx mediagate keys create --name NAME');
  for (const k of keys) out(keyLine(k));
}

export async function keysRevokeCommand(argv: string[]): Promise<void> {
  const { values, positionals } = parseCommand(keysRevoke, argv);
  const { config } = configFor(values);
  const id = positionals[0];
  await withStore(
    config,
    (s) =>
      asCommand(async () => {
        const a = adminOn(config, s);
        await a.keys.revoke(id).catch((err: unknown) => {
          // Revoking twice is a mistake in the arguments (status 2), as revoking an unknown id is.
          throw err instanceof GatewayError && err.status === 409 ? new UsageError(`keys revoke: no active key with id ${id}`) : err;
        });
        await a.record('key.revoke', id);
      }),
    { mustExist: true },
  );
  out(`Revoked ${id}.`);
  return tellInstances(config, 'keys', { key_id: id });
}

export async function keysWebhookSecretCommand(argv: string[]): Promise<void> {
  const { values, positionals } = parseCommand(keysWebhookSecret, argv);
  const { config } = configFor(values);
  const id = positionals[0];
  const secret = newWebhookSecret();
  const rotated = await withStore(
    config,
    async (s) => {
      const key = await new KeysRepo(s.db).findById(id);
      if (!key || key.revoked_at !== null) throw new UsageError(`keys webhook-secret: no active key with id ${id}`);
      const repo = new WebhookSecretsRepo(s.db);
      const had = !!(await repo.get(id));
      const now = Date.now();
      await repo.rotate(id, secret, now, now + config.webhooks.rotation_grace_s * 1000);
      return had;
    },
    { mustExist: true },
  );
  if (values.json) return out(JSON.stringify({ key_id: id, secret, rotated }));
  out(secret);
  out(
    rotated
      ? `Rotated. Webhooks are signed with this secret and, for ${config.webhooks.rotation_grace_s} s more, with the previous one too. It is not shown again.`
      : 'Webhooks of this key are signed with this secret (Standard Webhooks). It is not shown again.',
  );
}

export async function keysCreditCommand(argv: string[]): Promise<void> {
  const { values, positionals } = parseCommand(keysCredit, argv);
  const [id, amount] = positionals;
  if (!/^[+-]?\d+(\.\d+)?$/.test(amount)) throw new UsageError(`keys credit: the amount must be USD, e.g. +10 or -2.5 (got "${amount}")`, keysCredit);
  const { config } = configFor(values);
  const key = await withStore(
    config,
    (s) =>
      asCommand(async () => {
        const a = adminOn(config, s);
        const k = await a.keys.credit(id, amount);
        await a.record('key.credit', id, { usd: amount, balance_usd: k.credit_usd });
        return k;
      }),
    { mustExist: true },
  );
  out(creditLine(id, key));
}
