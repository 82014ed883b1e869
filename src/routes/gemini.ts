import type { Routes } from '../pipeline/gateway.js';
import type { GatewayRequest } from '../pipeline/request.js';
import { Type } from '@sinclair/typebox';
import type { Services } from '../services.js';
import { principalOf } from '../auth/hook.js';
import { GatewayError, errors } from '../http/errors.js';
import type { CatalogModel } from '../relay/catalog.js';
import { chatHandler } from './chat-handler.js';
import { registerGeminiVideoRoutes } from './gemini-videos.js';
import { noteModelOfPath, splitModelPath } from './gemini-path.js';

// Google's Gemini API on every chat model: POST /v1beta/models/{model}:generateContent and
// :streamGenerateContent (server-sent events, as with ?alt=sse), GET /v1beta/models in Gemini's
// list shape (chat models, and video models with :predictLongRunning: gemini-videos.ts). The key
// comes as x-goog-api-key, ?key= or Bearer; errors are {"error":{"code","message","status"}}
// (familyOf the /v1beta/ path).

const Open = { additionalProperties: true };

export const GenerateContentRequest = Type.Object(
  {
    contents: Type.Array(Type.Object({ role: Type.Optional(Type.String()), parts: Type.Array(Type.Object({}, Open), { minItems: 1 }) }, Open), { minItems: 1 }),
    systemInstruction: Type.Optional(Type.Union([Type.String(), Type.Object({}, Open)])),
    tools: Type.Optional(Type.Array(Type.Object({}, Open))),
    toolConfig: Type.Optional(Type.Object({}, Open)),
    generationConfig: Type.Optional(
      Type.Object(
        {
          maxOutputTokens: Type.Optional(Type.Integer({ minimum: 1 })),
          temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
          topP: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
          topK: Type.Optional(Type.Integer({ minimum: 1 })),
          candidateCount: Type.Optional(Type.Integer({ minimum: 1 })),
          stopSequences: Type.Optional(Type.Array(Type.String(), { maxItems: 5 })),
        },
        Open,
      ),
    ),
  },
  Open,
);

const ACTIONS = new Set(['generateContent', 'streamGenerateContent']);

/** `gemini-2.5-flash:generateContent` → its model and method (404 for a method the gateway lacks). */
function modelAction(path: string): { model: string; action: string } {
  const { model, action } = splitModelPath(path);
  if (!model || !ACTIONS.has(action)) throw new GatewayError(404, 'not_found', `The method "${action || path}" is not served here; use :generateContent or :streamGenerateContent (chat models) or :predictLongRunning (video models).`);
  return { model, action };
}

/** One model in Gemini's list shape. */
function modelEntry(m: CatalogModel) {
  return {
    name: `models/${m.id}`,
    version: '001',
    displayName: m.id,
    description: `${m.id} (${m.ownedBy}) through mediagate`,
    inputTokenLimit: 1048576,
    outputTokenLimit: 65536,
    supportedGenerationMethods: m.config.kind === 'video' ? ['predictLongRunning'] : ['generateContent', 'streamGenerateContent'],
  };
}

/** The models Gemini's API reaches: chat models, and video models through :predictLongRunning. */
const geminiKind = (m: CatalogModel) => m.config.kind === 'chat' || m.config.kind === 'video';

export function registerGeminiRoutes(app: Routes, services: Services): void {
  const read = (request: GatewayRequest) => {
    const { model, action } = modelAction((request.params as { '*': string })['*']);
    return { body: { ...(request.body as Record<string, unknown>), model }, stream: action === 'streamGenerateContent' };
  };
  app.post('/v1beta/models/*', { auth: true, billable: 'gemini', idempotent: true, onRequest: noteModelOfPath, schema: { body: GenerateContentRequest } }, chatHandler(services, { client: 'gemini', endpoint: 'gemini', read }));

  app.get('/v1beta/models', { auth: true }, async (request) => ({
    models: services.catalog
      .listFor(principalOf(request))
      .filter(geminiKind)
      .map(modelEntry),
  }));

  app.get<{ Params: { '*': string } }>('/v1beta/models/*', { auth: true }, async (request) => {
    const id = decodeURIComponent(request.params['*']);
    const m = services.catalog.listFor(principalOf(request)).find((x) => x.id === id && geminiKind(x));
    if (!m) throw errors.modelNotFound(id);
    return modelEntry(m);
  });

  registerGeminiVideoRoutes(app, services);
}
