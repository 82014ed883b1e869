import type { Routes } from '../../pipeline/gateway.js';
import { Type } from '@sinclair/typebox';
import type { Admin } from '../../admin/index.js';
import { actorName, actorOf } from './auth.js';
import { BudgetBody } from './keys.js';

const tags = ['admin: projects'];
const Id = Type.Object({ id: Type.String({ maxLength: 100 }) });
const Ratio = Type.Union([Type.Number(), Type.String({ maxLength: 30 }), Type.Null()]);

export function registerProjectRoutes(app: Routes, admin: Admin): void {
  app.get('/admin/api/projects', { schema: { tags, summary: 'Projects by name, with spend in the current budget window' } }, async () => ({ data: await admin.projects.list() }));

  app.post<{ Body: Record<string, unknown> }>(
    '/admin/api/projects',
    {
      schema: {
        tags,
        summary: 'Create a project (a named group of keys with a price ratio and a budget)',
        body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 100 }), price_ratio: Type.Optional(Ratio), ...BudgetBody }, { additionalProperties: false }),
      },
    },
    async (request, reply) => {
      const a = actorOf(request);
      const project = await admin.projects.create(request.body);
      await admin.audit.record(actorName(a), 'project.create', project.id, { name: project.name, price_ratio: project.price_ratio, budget_usd: project.budget_usd, budget_period: project.budget_period }, request.adminClient.address);
      return reply.code(201).send(project);
    },
  );

  app.get<{ Params: { id: string } }>('/admin/api/projects/:id', { schema: { tags, summary: 'One project, by id or name', params: Id } }, async (request) => admin.projects.get(request.params.id));

  app.patch<{ Params: { id: string }; Body: Record<string, unknown> }>(
    '/admin/api/projects/:id',
    {
      schema: {
        tags,
        summary: 'Change name, price ratio or budget (only the fields sent)',
        params: Id,
        body: Type.Object({ name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })), price_ratio: Type.Optional(Ratio), ...BudgetBody }, { additionalProperties: false }),
      },
    },
    async (request) => {
      const a = actorOf(request);
      const project = await admin.projects.update(request.params.id, request.body);
      await admin.audit.record(actorName(a), 'project.update', project.id, request.body, request.adminClient.address);
      return project;
    },
  );
}
