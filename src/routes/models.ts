import type { Routes } from '../pipeline/gateway.js';
import { Type } from '@sinclair/typebox';
import { principalOf } from '../auth/hook.js';
import { errors } from '../http/errors.js';
import type { GatewayRequest, Reply } from '../pipeline/request.js';
import { modelEntry as entry, type Catalog } from '../relay/catalog.js';

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

function listReply(catalog: Catalog, request: GatewayRequest, reply: Reply) {
  return reply.header('content-type', 'application/json; charset=utf-8').send(catalog.listBytesFor(principalOf(request)));
}

/** GET /v1/models and GET /v1/models/{id} for the OpenAI SDK's retrieve(). */
export function registerModelRoutes(app: Routes, catalog: Catalog): void {
  app.get(
    '/v1/models',
    { auth: true, schema: { response: { 200: ModelList } } },
    // Bytes prepared per allow-list (Catalog.listBytesFor); the schema documents them.
    async (request, reply) => listReply(catalog, request, reply),
  );

  app.get<{ Params: { model: string } }>(
    '/v1/models/:model',
    { auth: true, schema: { response: { 200: ModelEntry } } },
    async (request) => {
      const p = principalOf(request);
      const m = catalog.listFor(p).find((x) => x.id === request.params.model);
      if (!m) throw errors.modelNotFound(request.params.model);
      return entry(m);
    },
  );
}
