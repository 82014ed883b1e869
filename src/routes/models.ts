import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { principalOf } from '../auth/hook.js';
import { errors } from '../http/errors.js';
import type { Catalog, CatalogModel } from '../relay/catalog.js';

const ModelEntry = Type.Object({
  id: Type.String(),
  object: Type.Literal('model'),
  created: Type.Integer(),
  owned_by: Type.String(),
  supported_endpoint_types: Type.Array(Type.String()),
});

const ModelList = Type.Object({
  object: Type.Literal('list'),
  success: Type.Boolean(),
  data: Type.Array(ModelEntry),
});

function entry(m: CatalogModel) {
  return { id: m.id, object: 'model' as const, created: m.created, owned_by: m.ownedBy, supported_endpoint_types: m.endpointTypes };
}

/** GET /v1/models and GET /v1/models/{id} for the OpenAI SDK's retrieve(). */
export function registerModelRoutes(app: FastifyInstance, catalog: Catalog): void {
  app.get(
    '/v1/models',
    { config: { auth: true }, schema: { response: { 200: ModelList } } },
    async (request) => ({ object: 'list' as const, success: true, data: catalog.listFor(principalOf(request)).map(entry) }),
  );

  app.get<{ Params: { model: string } }>(
    '/v1/models/:model',
    { config: { auth: true }, schema: { response: { 200: ModelEntry } } },
    async (request) => {
      const p = principalOf(request);
      const m = catalog.listFor(p).find((x) => x.id === request.params.model);
      if (!m) throw errors.modelNotFound(request.params.model);
      return entry(m);
    },
  );
}
