import type { FastifyInstance } from 'fastify';
import { Type, type TSchema } from '@sinclair/typebox';
import type { Services } from '../services.js';
import { chatHandler } from './chat-handler.js';

// POST /v1/messages (Anthropic Messages). Errors answer in Anthropic's shape (familyOf the path).

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

export function registerMessagesRoutes(app: FastifyInstance, services: Services): void {
  app.post('/v1/messages', { config: { auth: true, billable: 'messages' }, schema: { body: MessagesRequest } }, chatHandler(services, { client: 'anthropic', endpoint: 'messages' }));
}
