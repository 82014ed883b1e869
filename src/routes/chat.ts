import type { Routes } from '../pipeline/gateway.js';
import { Type, type TSchema } from '@sinclair/typebox';
import type { Services } from '../services.js';
import { chatHandler } from './chat-handler.js';

// POST /v1/chat/completions (OpenAI Chat Completions). The schema checks what the gateway reads and
// the types a client can get wrong; every other field passes through to an OpenAI-format upstream.

const Nullable = <T extends TSchema>(s: T) => Type.Union([s, Type.Null()]);
const Open = { additionalProperties: true };

const ContentPart = Type.Object({ type: Type.String({ minLength: 1 }) }, Open);

const ToolCall = Type.Object(
  {
    id: Type.String(),
    type: Type.Optional(Type.String()),
    function: Type.Object({ name: Type.String(), arguments: Type.Optional(Type.String()) }, Open),
  },
  Open,
);

const Message = Type.Object(
  {
    role: Type.Union(['system', 'developer', 'user', 'assistant', 'tool', 'function'].map((r) => Type.Literal(r))),
    content: Type.Optional(Type.Union([Type.String(), Type.Array(ContentPart), Type.Null()])),
    name: Type.Optional(Type.String()),
    tool_calls: Type.Optional(Nullable(Type.Array(ToolCall))),
    tool_call_id: Type.Optional(Type.String()),
  },
  Open,
);

const Tool = Type.Object(
  {
    type: Type.String(),
    function: Type.Optional(
      Type.Object(
        {
          name: Type.String({ minLength: 1 }),
          description: Type.Optional(Type.String()),
          parameters: Type.Optional(Type.Object({}, Open)),
        },
        Open,
      ),
    ),
  },
  Open,
);

// Object forms beyond {type:"function"} (allowed_tools, custom) pass to an OpenAI-format upstream;
// conversion to Anthropic refuses what it cannot map.
const ToolChoice = Type.Union([Type.Literal('none'), Type.Literal('auto'), Type.Literal('required'), Type.Object({ type: Type.String({ minLength: 1 }) }, Open)]);

export const ChatCompletionRequest = Type.Object(
  {
    model: Type.String({ minLength: 1 }),
    messages: Type.Array(Message, { minItems: 1 }),
    stream: Type.Optional(Nullable(Type.Boolean())),
    stream_options: Type.Optional(Nullable(Type.Object({ include_usage: Type.Optional(Type.Boolean()) }, Open))),
    max_tokens: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
    max_completion_tokens: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
    temperature: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 2 }))),
    top_p: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 1 }))),
    n: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 128 }))),
    stop: Type.Optional(Nullable(Type.Union([Type.String(), Type.Array(Type.String(), { maxItems: 4 })]))),
    tools: Type.Optional(Type.Array(Tool)),
    tool_choice: Type.Optional(ToolChoice),
    parallel_tool_calls: Type.Optional(Type.Boolean()),
    user: Type.Optional(Type.String()),
  },
  Open,
);

export function registerChatRoutes(app: Routes, services: Services): void {
  app.post('/v1/chat/completions', { auth: true, billable: 'chat', idempotent: true, schema: { body: ChatCompletionRequest } }, chatHandler(services, { client: 'openai', endpoint: 'chat' }));
}
