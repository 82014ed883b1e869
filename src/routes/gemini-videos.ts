import type { Routes } from '../pipeline/gateway.js';
import { Type } from '@sinclair/typebox';
import type { Services } from '../services.js';
import { principalOf } from '../auth/hook.js';
import { GatewayError } from '../http/errors.js';
import { limitModel } from '../pipeline/steps.js';
import { claimUsageRow } from '../limits/usage-backstop.js';
import { baseForRequest } from '../tasks/content/gateway-url.js';
import { asGeminiVideoError, geminiOperation, geminiVideoBody, taskIdOfFile } from '../tasks/gemini-videos.js';
import { ownedTask, taskNotExist } from '../tasks/request.js';
import { sendVideo } from './video-lifecycle.js';
import { noteModelOfPath, splitModelPath } from './gemini-path.js';

// Google's video generation on every video model (docs/video.md, "Gemini API"):
//   POST /v1beta/models/{model}:predictLongRunning → an operation (the same task as
//        /v1/video/generations and /v1/videos: one id, one credit hold, one ledger row)
//   GET  /v1beta/models/{model}/operations/{task_id} → the operation
//   GET  /v1beta/files/{name}:download → the video, with the client's own key
// Errors are Gemini's ({"error":{"code","message","status"}}, familyOf the /v1beta/ path).

/** The route constraint that tells `…:predictLongRunning` from the chat methods on the same wildcard path. */
const METHOD = 'geminiMethod';
type RouteHandler = Parameters<ReturnType<Parameters<Routes['addConstraintStrategy']>[0]['storage']>['set']>[1];

const PredictLongRunningRequest = Type.Object(
  {
    instances: Type.Array(Type.Object({}, { additionalProperties: true }), { minItems: 1, maxItems: 1 }),
    parameters: Type.Optional(Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()])),
  },
  { additionalProperties: false },
);

/** The method after the model in a `/v1beta/models/{model}:{method}` URL ('' for none). */
function methodOf(url: string): string {
  if (!url.startsWith('/v1beta/models/')) return '';
  const q = url.indexOf('?');
  const m = /(?::|%3[Aa])([A-Za-z]+)$/.exec(q < 0 ? url : url.slice(0, q));
  return m ? m[1] : '';
}

export function registerGeminiVideoRoutes(app: Routes, services: Services): void {
  const { config, tasks, lifecycle } = services;
  if (!app.hasConstraintStrategy(METHOD)) {
    app.addConstraintStrategy({
      name: METHOD,
      storage() {
        const handlers = new Map<unknown, RouteHandler>();
        return { get: (method: unknown) => handlers.get(method) ?? null, set: (method: unknown, handler: RouteHandler) => void handlers.set(method, handler) };
      },
      deriveConstraint: (req) => methodOf(req.url ?? ''),
      // Requests of other methods fall through to the chat route (no constraint) on the same path.
      mustMatchWhenDerived: false,
    });
  }

  app.post<{ Params: { '*': string }; Body: { instances: unknown[]; parameters?: unknown } }>(
    '/v1beta/models/*',
    { auth: true, billable: 'video', idempotent: true, onRequest: noteModelOfPath, constraints: { [METHOD]: 'predictLongRunning' }, schema: { body: PredictLongRunningRequest } },
    async (request) => {
      const { model } = splitModelPath(request.params['*']);
      // The model is in the URL, not the body: its rate limit is counted here.
      await limitModel(request, model);
      const { body, imageNames } = geminiVideoBody(model, request.body);
      try {
        const record = await tasks.service.create(principalOf(request), body, () => claimUsageRow(request), request.departed, request.trace);
        return geminiOperation({ task_id: record.task_id, model, status: record.status, fail_reason: record.fail_reason }, baseForRequest(config, request));
      } catch (err) {
        throw asGeminiVideoError(err, imageNames);
      }
    },
  );

  app.get<{ Params: { model: string; operation: string } }>('/v1beta/models/:model/operations/:operation', { auth: true }, async (request) => {
    const { model, operation } = request.params;
    const row = await ownedTask(tasks.repo, principalOf(request), operation).catch((err: unknown) => {
      if (err instanceof GatewayError && err.code === 'invalid_task_id') throw new GatewayError(400, 'invalid_request', 'An operation name is models/{model}/operations/{id}, the id 1–128 letters, digits, "_", "." or "-".');
      throw err;
    });
    // An operation is known under its own model only.
    if (row.model !== model) throw taskNotExist();
    return geminiOperation(row, baseForRequest(config, request));
  });

  app.get<{ Params: { file: string } }>('/v1beta/files/:file', { auth: true }, async (request, reply) => {
    const m = /^([0-9a-f]+):download$/.exec(request.params.file);
    const taskId = m ? taskIdOfFile(m[1]) : null;
    if (!taskId) throw new GatewayError(404, 'not_found', 'No such file here: a video downloads from files/{name}:download, as the video.uri of a finished operation gives it.');
    return sendVideo(lifecycle.content, request, reply, taskId);
  });
}
