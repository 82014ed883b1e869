import type { Routes } from '../../pipeline/gateway.js';
import { Type } from '@sinclair/typebox';
import type { Admin } from '../../admin/index.js';
import { int, str } from '../../admin/query.js';
import { actorName, actorOf } from './auth.js';

const tags = ['admin: keys'];
const Id = Type.Object({ id: Type.String({ maxLength: 100 }) });
const Nullable = <T extends import('@sinclair/typebox').TSchema>(t: T) => Type.Union([t, Type.Null()]);
// Checked by the keys service, whose message names the field and the range (a schema message would not).
const Limit = Type.Unknown({ description: 'a whole number from 0 (no limit) to 1000000000, or its digits as text' });
const KeyFields = {
  name: Type.String({ minLength: 1, maxLength: 100 }),
  models: Nullable(Type.Array(Type.String(), { maxItems: 1000 })),
  rpm: Limit,
  concurrency: Limit,
  expires_at: Nullable(Type.String({ maxLength: 40, description: 'ISO-8601' })),
  project: Nullable(Type.String({ maxLength: 100, description: 'a project name or id; null: none' })),
  budget_usd: Nullable(Type.Union([Type.String({ maxLength: 30 }), Type.Number()])),
  budget_period: Nullable(Type.String({ maxLength: 10, description: 'day, week or month' })),
};
/** The fields keys and projects share about budgets (optional in every body). */
export const BudgetBody = { budget_usd: Type.Optional(KeyFields.budget_usd), budget_period: Type.Optional(KeyFields.budget_period) };

export function registerKeyRoutes(app: Routes, admin: Admin): void {
  app.get('/admin/api/keys', { schema: { tags, summary: 'Application keys, oldest first (q: part of a name, any case, or the start of an id)' } }, async (request) => {
    const q = request.query as Record<string, unknown>;
    return admin.keys.list({ limit: int(q, 'limit', 1, 1000, 100), cursor: str(q, 'cursor', 512), q: str(q, 'q', 100) });
  });

  app.post<{ Body: Record<string, unknown> }>(
    '/admin/api/keys',
    {
      schema: {
        tags,
        summary: 'Create a key; the answer holds the key itself, shown this once',
        body: Type.Object({ ...KeyFields, allow_duplicate_name: Type.Optional(Type.Boolean()), credit_usd: Type.Optional(Nullable(Type.Union([Type.String({ maxLength: 30 }), Type.Number()]))), models: Type.Optional(KeyFields.models), rpm: Type.Optional(Limit), concurrency: Type.Optional(Limit), expires_at: Type.Optional(KeyFields.expires_at), project: Type.Optional(KeyFields.project), ...BudgetBody }, { additionalProperties: false }),
      },
    },
    async (request, reply) => {
      const a = actorOf(request);
      const { allow_duplicate_name, ...input } = request.body;
      const { key, secret } = await admin.keys.create(input, { allowDuplicateName: allow_duplicate_name === true });
      await admin.audit.record(actorName(a), 'key.create', key.id, { name: key.name, models: key.models, rpm: key.rpm, concurrency: key.concurrency, credit_usd: key.credit_usd, expires_at: key.expires_at, project: key.project, budget_usd: key.budget_usd, budget_period: key.budget_period }, request.adminClient.address);
      return reply.code(201).send({ ...key, key: secret });
    },
  );

  app.get<{ Params: { id: string } }>('/admin/api/keys/:id', { schema: { tags, summary: 'One key', params: Id } }, async (request) => admin.keys.get(request.params.id));

  app.patch<{ Params: { id: string }; Body: Record<string, unknown> }>(
    '/admin/api/keys/:id',
    {
      schema: {
        tags,
        summary: 'Change name, models, rpm, concurrency, expiry, project or budget (only the fields sent)',
        params: Id,
        body: Type.Object({ name: Type.Optional(KeyFields.name), models: Type.Optional(KeyFields.models), rpm: Type.Optional(Limit), concurrency: Type.Optional(Limit), expires_at: Type.Optional(KeyFields.expires_at), project: Type.Optional(KeyFields.project), ...BudgetBody }, { additionalProperties: false }),
      },
    },
    async (request) => {
      const a = actorOf(request);
      const key = await admin.keys.update(request.params.id, request.body);
      await admin.audit.record(actorName(a), 'key.update', key.id, request.body, request.adminClient.address);
      return key;
    },
  );

  app.post<{ Params: { id: string } }>('/admin/api/keys/:id/revoke', { schema: { tags, summary: 'Revoke a key (every instance refuses it at once)', params: Id } }, async (request) => {
    const a = actorOf(request);
    const key = await admin.keys.revoke(request.params.id);
    await admin.audit.record(actorName(a), 'key.revoke', key.id, {}, request.adminClient.address);
    return key;
  });

  app.post<{ Params: { id: string }; Body: { usd: string | number } }>(
    '/admin/api/keys/:id/credit',
    {
      schema: {
        tags,
        summary: 'Add to or take from a limited key\'s balance: {"usd": "+10"} or {"usd": "-2.5"}; never below zero',
        params: Id,
        body: Type.Object({ usd: Type.Union([Type.String({ maxLength: 30 }), Type.Number()]) }, { additionalProperties: false }),
      },
    },
    async (request) => {
      const a = actorOf(request);
      const key = await admin.keys.credit(request.params.id, request.body.usd);
      await admin.audit.record(actorName(a), 'key.credit', key.id, { usd: String(request.body.usd), balance_usd: key.credit_usd }, request.adminClient.address);
      return key;
    },
  );
}
