import type { Routes } from '../pipeline/gateway.js';
import type { GatewayRequest } from '../pipeline/request.js';
import { Type, type TSchema } from '@sinclair/typebox';
import type { Services } from '../services.js';
import { principalOf } from '../auth/hook.js';
import { localId } from '../formats/hub/util.js';
import { GatewayError } from '../http/errors.js';
import type { ChatCall } from '../relay/chat.js';
import type { StoredResponse } from '../store/repos/responses.js';
import { chatHandler } from './chat-handler.js';
import { historyOf, lostTurn, notFound, resolveInput, type Budget, type ResolvedInput } from './responses-state.js';

// The OpenAI Responses API: POST /v1/responses on every chat model, whatever its channels speak,
// and the state OpenAI keeps for it. A stored response (store defaults to true) keeps the input
// its request added, its output and the response it continued, per key, for responses.retain_days,
// so previous_response_id and {"type":"item_reference","id"} resolve here for any upstream
// (responses-state.ts); GET / DELETE /v1/responses/{id} and GET /v1/responses/{id}/input_items
// read it. Another key's id is a 404.

type Json = Record<string, any>;

const Nullable = <T extends TSchema>(s: T) => Type.Union([s, Type.Null()]);
const Open = { additionalProperties: true };

export const ResponsesRequest = Type.Object(
  {
    model: Type.String({ minLength: 1 }),
    input: Type.Union([Type.String(), Type.Array(Type.Object({}, Open))]),
    instructions: Type.Optional(Nullable(Type.String())),
    stream: Type.Optional(Nullable(Type.Boolean())),
    store: Type.Optional(Nullable(Type.Boolean())),
    previous_response_id: Type.Optional(Nullable(Type.String({ minLength: 1 }))),
    max_output_tokens: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
    temperature: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 2 }))),
    top_p: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 1 }))),
    tools: Type.Optional(Type.Array(Type.Object({ type: Type.String({ minLength: 1 }) }, Open))),
    tool_choice: Type.Optional(Type.Union([Type.String(), Type.Object({}, Open)])),
    parallel_tool_calls: Type.Optional(Nullable(Type.Boolean())),
    text: Type.Optional(Nullable(Type.Object({ format: Type.Optional(Type.Object({ type: Type.String() }, Open)) }, Open))),
    reasoning: Type.Optional(Nullable(Type.Object({}, Open))),
    metadata: Type.Optional(Nullable(Type.Record(Type.String(), Type.String()))),
    user: Type.Optional(Type.String()),
  },
  Open,
);

/** What the POST handler remembers between resolving the input and storing the answer. */
interface ResponseState extends ResolvedInput {
  store: boolean;
}

const states = new WeakMap<GatewayRequest, ResponseState>();

/** The fields of the request a response object repeats, with OpenAI's defaults. */
function echoOf(body: Json, store: boolean): Json {
  return {
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    previous_response_id: body.previous_response_id ?? null,
    store,
    temperature: body.temperature ?? 1,
    top_p: body.top_p ?? 1,
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools ?? [],
    text: body.text ?? { format: { type: 'text' } },
    reasoning: { effort: body.reasoning?.effort ?? null, summary: body.reasoning?.summary ?? null },
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    metadata: body.metadata ?? {},
    user: body.user ?? null,
  };
}

export function registerResponsesRoutes(app: Routes, services: Services): void {
  const repo = services.responses;
  const retainMs = () => services.config.responses.retain_days * 86_400_000;
  // What stored state may expand a request to: no more than a client may send itself.
  const budget = (): Budget => ({ bytes: Math.floor(services.config.server.body_limit_mb * 1024 * 1024), mb: services.config.server.body_limit_mb });

  /** Replaces previous_response_id and item references with what they stand for. */
  async function prepare(request: GatewayRequest, call: ChatCall): Promise<void> {
    const keyId = principalOf(request).keyId;
    const body = call.body as Json;
    const store = body.store !== false;
    const given: Json[] = typeof body.input === 'string' ? [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: body.input }] }] : (body.input as Json[]);
    const declared = Number(request.headers['content-length']);
    const requestBytes = Number.isFinite(declared) && declared > 0 ? declared : Buffer.byteLength(JSON.stringify(body));
    const previousId = typeof body.previous_response_id === 'string' ? body.previous_response_id : null;
    const resolved = await resolveInput(repo, keyId, given, previousId, requestBytes, budget());
    states.set(request, { store, ...resolved });
    const { previous_response_id: _prev, ...rest } = body;
    call.body = { ...rest, input: resolved.input };
    call.bodyBytes = resolved.bytes;
    call.responseId = localId('resp_');
    call.echo = echoOf(body, store);
  }

  async function finished(request: GatewayRequest, _call: ChatCall, answer: Json): Promise<void> {
    const state = states.get(request);
    if (!state?.store || typeof answer.id !== 'string') return;
    const { max_per_key, max_mb_per_key } = services.config.responses;
    await repo.save(
      {
        id: answer.id,
        keyId: principalOf(request).keyId,
        model: String(answer.model ?? ''),
        body: answer,
        inputItems: state.own,
        parentId: state.parentId,
        depth: state.depth,
        renew: state.renew,
        items: [...state.fresh, ...((answer.output as Json[]) ?? [])],
        expiresAt: Date.now() + retainMs(),
      },
      { count: max_per_key, bytes: Math.floor(max_mb_per_key * 1024 * 1024) },
    );
  }

  app.post('/v1/responses', { auth: true, billable: 'responses', idempotent: true, schema: { body: ResponsesRequest } }, chatHandler(services, { client: 'responses', endpoint: 'responses', prepare, finished }));

  app.get<{ Params: { id: string } }>('/v1/responses/:id', { auth: true }, async (request) => {
    const r = await repo.get(principalOf(request).keyId, request.params.id);
    if (!r) throw notFound('Response', request.params.id);
    return r.body;
  });

  app.delete<{ Params: { id: string } }>('/v1/responses/:id', { auth: true }, async (request) => {
    if (!(await repo.delete(principalOf(request).keyId, request.params.id))) throw notFound('Response', request.params.id);
    return { id: request.params.id, object: 'response.deleted', deleted: true };
  });

  app.get<{ Params: { id: string }; Querystring: { order?: string; limit?: string; after?: string } }>('/v1/responses/:id/input_items', { auth: true }, async (request) => {
    const keyId = principalOf(request).keyId;
    const r = await repo.get(keyId, request.params.id);
    if (!r) throw notFound('Response', request.params.id);
    const { order = 'desc', after } = request.query;
    if (order !== 'asc' && order !== 'desc') throw new GatewayError(400, 'invalid_request', 'order must be "asc" or "desc".', {}, 'order');
    const limit = request.query.limit === undefined ? 20 : Number(request.query.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new GatewayError(400, 'invalid_request', 'limit must be an integer from 1 to 100.', {}, 'limit');
    let items = await wholeInput(keyId, r);
    if (order === 'desc') items.reverse();
    if (after) {
      const at = items.findIndex((i) => i.id === after);
      if (at < 0) throw new GatewayError(400, 'invalid_request', `No input item with id '${after}' in this response.`, {}, 'after');
      items = items.slice(at + 1);
    }
    const data = items.slice(0, limit);
    return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data[data.length - 1]?.id ?? null, has_more: items.length > limit };
  });

  /** A stored response's whole input: the conversation before it, then what its request added. */
  async function wholeInput(keyId: string, r: StoredResponse): Promise<Json[]> {
    if (r.parentId === null) return r.inputItems;
    const b = budget();
    const earlier = await historyOf(repo, keyId, r.parentId, b.bytes, null);
    if (earlier === 'over') throw new GatewayError(413, 'request_too_large', `The input of this response is larger than this gateway reads back (${b.mb} MB, server.body_limit_mb).`);
    if (!earlier) throw lostTurn(r.id, r.parentId, null);
    return [...earlier.items, ...r.inputItems];
  }
}
