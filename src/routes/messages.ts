import type { Routes } from '../pipeline/gateway.js';
import { Type, type TSchema } from '@sinclair/typebox';
import type { Services } from '../services.js';
import { principalOf } from '../auth/hook.js';
import { statusOf } from '../http/errors.js';
import { claimUsageRow } from '../limits/usage-backstop.js';
import { resolveModel } from '../relay/metered.js';
import { countInputTokens } from '../relay/count-tokens.js';
import { chatHandler, estimateChatTokens } from './chat-handler.js';

// POST /v1/messages (Anthropic Messages) and POST /v1/messages/count_tokens. Errors answer in
// Anthropic's shape (familyOf the path).

const Nullable = <T extends TSchema>(s: T) => Type.Union([s, Type.Null()]);
const Open = { additionalProperties: true };

const Block = Type.Object({ type: Type.String({ minLength: 1 }) }, Open);

const MessageParam = Type.Object(
  {
    role: Type.Union([Type.Literal('user'), Type.Literal('assistant')]),
    content: Type.Union([Type.String(), Type.Array(Block)]),
  },
  Open,
);

const Tool = Type.Object(
  {
    name: Type.String({ minLength: 1 }),
    description: Type.Optional(Type.String()),
    input_schema: Type.Optional(Type.Object({}, Open)),
    type: Type.Optional(Nullable(Type.String())),
  },
  Open,
);

const ToolChoice = Type.Object(
  {
    type: Type.Union([Type.Literal('auto'), Type.Literal('any'), Type.Literal('tool'), Type.Literal('none')]),
    name: Type.Optional(Type.String({ minLength: 1 })),
    disable_parallel_tool_use: Type.Optional(Type.Boolean()),
  },
  Open,
);

export const MessagesRequest = Type.Object(
  {
    model: Type.String({ minLength: 1 }),
    messages: Type.Array(MessageParam, { minItems: 1 }),
    max_tokens: Type.Integer({ minimum: 1 }),
    system: Type.Optional(Type.Union([Type.String(), Type.Array(Type.Object({ type: Type.Literal('text'), text: Type.String() }, Open))])),
    stream: Type.Optional(Type.Boolean()),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    top_p: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    top_k: Type.Optional(Type.Integer({ minimum: 0 })),
    stop_sequences: Type.Optional(Type.Array(Type.String())),
    tools: Type.Optional(Type.Array(Tool)),
    tool_choice: Type.Optional(ToolChoice),
    metadata: Type.Optional(Type.Object({ user_id: Type.Optional(Nullable(Type.String())) }, Open)),
  },
  Open,
);

/** A token count takes the body of a message without its output settings. */
export const CountTokensRequest = Type.Omit(MessagesRequest, ['max_tokens', 'stream']);

const CountTokensAnswer = Type.Object({ input_tokens: Type.Integer() }, { additionalProperties: false });

export function registerMessagesRoutes(app: Routes, services: Services): void {
  app.post('/v1/messages', { auth: true, billable: 'messages', idempotent: true, schema: { body: MessagesRequest } }, chatHandler(services, { client: 'anthropic', endpoint: 'messages' }));

  // Free: one ledger row with the count as its input units and no cost (docs/chat.md).
  app.post('/v1/messages/count_tokens', { auth: true, billable: 'count_tokens', schema: { body: CountTokensRequest, response: { 200: CountTokensAnswer } } }, async (request) => {
    const started = Date.now();
    const principal = principalOf(request);
    const body = request.body as Record<string, unknown>;
    const model = resolveModel(services.catalog, principal, body.model as string, 'chat', (m) => `The model "${m.id}" is not a chat model.`);
    // The very bound a message with this body would hold credit for.
    const bound = estimateChatTokens('anthropic', body, Number(request.headers['content-length'] ?? 0), model.config.image_input_tokens).input;
    const record = (status: number, channel: string, tokens: number) => {
      if (!claimUsageRow(request)) return;
      services.ledger.record({ key_id: principal.keyId, model: model.id, channel, endpoint: 'count_tokens', status, input_units: tokens, output_units: 0, cost_micros: 0, latency_ms: Date.now() - started });
    };
    try {
      const count = await countInputTokens(services, model, body, bound, request.departed);
      record(200, count.channel, count.inputTokens);
      return { input_tokens: count.inputTokens };
    } catch (err) {
      record(statusOf(err), '', 0);
      throw err;
    }
  });
}
