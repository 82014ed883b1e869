import type { Routes } from '../pipeline/gateway.js';
import { Type } from '@sinclair/typebox';
import { principalOf } from '../auth/hook.js';
import type { Principal } from '../auth/principal.js';
import type { Config } from '../config/schema.js';
import { errors } from '../http/errors.js';
import { callerPriceRatio, pricingView } from '../limits/pricing.js';
import type { GatewayRequest, Reply } from '../pipeline/request.js';
import { modelEntry as entry, type Catalog, type CatalogModel } from '../relay/catalog.js';
import { modelCapabilities } from '../tasks/capabilities.js';

const ModelEntry = Type.Object({
  id: Type.String(),
  object: Type.Literal('model'),
  created: Type.Integer(),
  owned_by: Type.String(),
  supported_endpoint_types: Type.Array(Type.String()),
  // Only with ?include= on the list; always on GET /v1/models/{id}.
  capabilities: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  pricing: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});

const ModelList = Type.Object({
  object: Type.Literal('list'),
  success: Type.Boolean(),
  data: Type.Array(ModelEntry),
});

/** What `?include=` may add to each entry of the list. */
const INCLUDES = ['capabilities', 'pricing'] as const;
type Include = (typeof INCLUDES)[number];

function includesOf(raw: unknown): Set<Include> | null {
  if (raw === undefined) return null;
  const values = (Array.isArray(raw) ? raw : [raw]).flatMap((v) => String(v).split(',')).map((v) => v.trim());
  for (const v of values) {
    if (!(INCLUDES as readonly string[]).includes(v)) throw errors.invalidRequest(`include must be a comma-separated list of ${INCLUDES.join(', ')} (got ${JSON.stringify(v.slice(0, 64))}).`, 'include');
  }
  return new Set(values as Include[]);
}

/** A model's entry with what `include` asks for: what it accepts, and its price rule at the caller's ratio. */
function detailed(m: CatalogModel, p: Principal, include: ReadonlySet<Include>, config: Config) {
  return {
    ...entry(m),
    ...(include.has('capabilities') ? { capabilities: modelCapabilities(m, config.images) } : {}),
    ...(include.has('pricing') ? { pricing: pricingView(m.config.price, callerPriceRatio(p)) } : {}),
  };
}

function listReply(catalog: Catalog, request: GatewayRequest, reply: Reply) {
  return reply.header('content-type', 'application/json; charset=utf-8').send(catalog.listBytesFor(principalOf(request)));
}

/** GET /v1/models (with ?include=capabilities,pricing) and GET /v1/models/{id} for the OpenAI SDK's retrieve(). */
export function registerModelRoutes(app: Routes, catalog: Catalog, config: Config): void {
  const all = new Set(INCLUDES);
  app.get<{ Querystring: { include?: string | string[] } }>(
    '/v1/models',
    { auth: true, schema: { response: { 200: ModelList } } },
    // Without include: bytes prepared per allow-list (Catalog.listBytesFor); the schema documents them.
    async (request, reply) => {
      const include = includesOf(request.query.include);
      if (!include) return listReply(catalog, request, reply);
      const p = principalOf(request);
      return { object: 'list', success: true, data: catalog.listFor(p).map((m) => detailed(m, p, include, config)) };
    },
  );

  app.get<{ Params: { model: string } }>(
    '/v1/models/:model',
    { auth: true, schema: { response: { 200: ModelEntry } } },
    async (request) => {
      const p = principalOf(request);
      const m = catalog.listFor(p).find((x) => x.id === request.params.model);
      if (!m) throw errors.modelNotFound(request.params.model);
      return detailed(m, p, all, config);
    },
  );
}
