import type { ServerResponse } from 'node:http';
import { sendJson, type SimContext, type SimRoute, type SimState } from './router.js';

// The simulator's chat "model", shared by its OpenAI and Anthropic sides: deterministic answers
// that tests can assert (an echo of the prompt, or a call of the first tool with arguments taken
// from the prompt), token counts consistent with what is sent, and paced streaming.

export interface SimTool {
  name: string;
  schema: Record<string, unknown>;
}

/** A request reduced to what the answer depends on (the same for both formats). */
export interface SimConversation {
  /** Every text the request carries, for the input token count. */
  texts: string[];
  images: number;
  /** The last thing the user said. */
  prompt: string;
  /** The content of the tool result the request ends with, if it does. */
  toolResult: string | null;
  tools: SimTool[];
  /** A tool the client forced (by name), or "any". */
  forcedTool: string | null;
  toolsOff: boolean;
  maxTokens: number | null;
  stop: string[];
  /** The answer must be JSON: any object (json mode), or one valid against this schema. */
  json?: { schema: Record<string, unknown> | null } | null;
  /** The client asked for reasoning: the answer starts with a short thought. */
  reasoning?: boolean;
}

/** What a part reads from a request's turns and tools; spread into its SimConversation. */
export type SimReading = Pick<SimConversation, 'texts' | 'images' | 'prompt' | 'toolResult' | 'tools'>;

export function newReading(): SimReading {
  return { texts: [], images: 0, prompt: '', toolResult: null, tools: [] };
}

/**
 * A user turn: its text is what the answer is about. A turn that carries only tool results (the
 * outputs of Anthropic's tool_result blocks, Gemini's functionResponse parts) makes them the subject.
 */
export function readUserTurn(read: SimReading, said: string, toolOutputs: string[] = []): void {
  if (toolOutputs.length && !said) {
    read.toolResult = toolOutputs.join(' ');
  } else {
    read.prompt = said;
    read.toolResult = null;
  }
}

export interface SimAnswer {
  /** Text pieces, one token each (for a tool call: a short preamble). */
  pieces: string[];
  tool: { name: string; args: string; argPieces: string[] } | null;
  finish: 'end' | 'length' | 'stop_sequence' | 'tool';
  stopSequence: string | null;
  inputTokens: number;
  /** Reasoning pieces (one token each), shown before the answer when the client asked for it. */
  thought: string[];
}

/** Images count as a fixed 85 tokens (OpenAI's low-detail price). */
const IMAGE_TOKENS = 85;
const TOKEN = /\s*(?:[\p{L}\p{N}_']+|[^\s\p{L}\p{N}_'])|\s+$/gu;

/** The text of a message's content in either format: a string, or the `text` parts of a list. */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((p: { type?: unknown; text?: unknown } | null) => p?.type === 'text' && typeof p.text === 'string')
    .map((p: { text: string }) => p.text)
    .join(' ');
}

/** The text split into tokens: a word or one symbol, with the whitespace before it. */
export function tokenize(text: string): string[] {
  return text.match(TOKEN) ?? [];
}

export function countTokens(texts: string[]): number {
  let n = 0;
  for (const t of texts) n += tokenize(t).length;
  return n;
}

export function answer(c: SimConversation): SimAnswer {
  const inputTokens = countTokens(c.texts) + c.images * IMAGE_TOKENS;
  const thought = c.reasoning ? tokenize(`The user wrote: ${c.prompt}`) : [];
  // A forced tool is called even after a tool result (as real models do when the client insists).
  const forced = c.forcedTool !== null && !c.toolsOff;
  if (c.tools.length && !c.toolsOff && (c.toolResult === null || forced)) {
    const tool = (c.forcedTool && c.forcedTool !== 'any' && c.tools.find((t) => t.name === c.forcedTool)) || c.tools[0];
    const args = JSON.stringify(argumentsFor(tool.schema, c.prompt));
    return { pieces: tokenize(`Calling ${tool.name}.`), tool: { name: tool.name, args, argPieces: tokenize(args) }, finish: 'tool', stopSequence: null, inputTokens, thought };
  }
  if (c.json) {
    const said = c.toolResult !== null ? `Tool result: ${c.toolResult}` : c.prompt;
    const value = c.json.schema ? valueFor(c.json.schema, said, c.json.schema) : { answer: said };
    return { pieces: tokenize(JSON.stringify(value)), tool: null, finish: 'end', stopSequence: null, inputTokens, thought };
  }
  let text = c.toolResult !== null ? `Tool result: ${c.toolResult}` : `You said: ${c.prompt}`;
  let finish: SimAnswer['finish'] = 'end';
  let stopSequence: string | null = null;
  for (const s of c.stop) {
    const at = s ? text.indexOf(s) : -1;
    if (at >= 0) {
      text = text.slice(0, at);
      finish = 'stop_sequence';
      stopSequence = s;
    }
  }
  let pieces = tokenize(text);
  if (c.maxTokens !== null && pieces.length > c.maxTokens) {
    pieces = pieces.slice(0, c.maxTokens);
    finish = 'length';
    stopSequence = null;
  }
  return { pieces, tool: null, finish, stopSequence, inputTokens, thought };
}

/** Arguments for a tool from its JSON schema: strings get the prompt, numbers its token count. */
export function argumentsFor(schema: Record<string, unknown>, prompt: string): Record<string, unknown> {
  const v = valueFor(schema ?? {}, prompt, schema ?? {});
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

type Schema = Record<string, any>;

/**
 * A value valid against a JSON Schema (the subset clients send: types, properties, items, enum,
 * const, anyOf/oneOf/allOf, $ref into $defs/definitions, bounds): strings are the prompt, numbers
 * its token count, within the schema's limits.
 */
export function valueFor(schema: Schema, prompt: string, root: Schema, depth = 0): unknown {
  if (!schema || typeof schema !== 'object' || depth > 12) return null;
  if (typeof schema.$ref === 'string') {
    const path = schema.$ref.replace(/^#\/?/, '').split('/').filter(Boolean);
    let target: any = root;
    for (const k of path) target = target?.[decodeURIComponent(k.replace(/~1/g, '/').replace(/~0/g, '~'))];
    return valueFor(target ?? {}, prompt, root, depth + 1);
  }
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length) return schema.enum[0];
  const union = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(union) && union.length) {
    const pick = union.find((s: Schema) => s?.type !== 'null') ?? union[0];
    return valueFor(pick, prompt, root, depth + 1);
  }
  if (Array.isArray(schema.allOf) && schema.allOf.length) {
    return valueFor(Object.assign({}, ...schema.allOf), prompt, root, depth + 1);
  }
  let type = schema.type;
  if (Array.isArray(type)) type = type.find((t: string) => t !== 'null') ?? 'null';
  if (!type) type = schema.properties ? 'object' : schema.items ? 'array' : 'string';
  switch (String(type).toLowerCase()) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [name, p] of Object.entries((schema.properties ?? {}) as Record<string, Schema>)) out[name] = valueFor(p, prompt, root, depth + 1);
      return out;
    }
    case 'array': {
      const n = Math.max(1, Number(schema.minItems ?? 1));
      const max = schema.maxItems != null ? Number(schema.maxItems) : n;
      return Array.from({ length: Math.min(n, max) }, () => valueFor(schema.items ?? {}, prompt, root, depth + 1));
    }
    case 'integer':
    case 'number': {
      let n = countTokens([prompt]);
      if (schema.minimum != null) n = Math.max(n, Number(schema.minimum));
      if (schema.exclusiveMinimum != null) n = Math.max(n, Number(schema.exclusiveMinimum) + 1);
      if (schema.maximum != null) n = Math.min(n, Number(schema.maximum));
      if (schema.exclusiveMaximum != null) n = Math.min(n, Number(schema.exclusiveMaximum) - 1);
      return n;
    }
    case 'boolean':
      return true;
    case 'null':
      return null;
    default: {
      let str = prompt || 'text';
      if (schema.format === 'date-time') return '2026-01-01T00:00:00Z';
      if (schema.format === 'date') return '2026-01-01';
      if (schema.format === 'email') return 'user@example.com';
      if (schema.format === 'uri' || schema.format === 'url') return 'https://example.com/';
      if (schema.maxLength != null) str = str.slice(0, Number(schema.maxLength));
      if (schema.minLength != null && str.length < Number(schema.minLength)) str = str.padEnd(Number(schema.minLength), '.');
      return str;
    }
  }
}

// ---- shared state: ids and stream pacing (set through POST /__sim/chat) ----

interface ChatPart {
  seq: number;
  streamDelayMs: number;
  /** Streams paused because the client (the gateway) is not reading: back-pressure made visible. */
  waitingForDrain: number;
}

function part(state: SimState): ChatPart {
  let p = state.parts.get('chat') as ChatPart | undefined;
  if (!p) {
    p = { seq: 0, streamDelayMs: 0, waitingForDrain: 0 };
    state.parts.set('chat', p);
  }
  return p;
}

export function nextId(state: SimState, prefix: string): string {
  return `${prefix}${(++part(state).seq).toString().padStart(6, '0')}`;
}

/**
 * POST /__sim/chat {"stream_delay_ms": n}: the pause between stream events (0 by default).
 * GET /__sim/chat: that setting and how many streams wait for their reader to drain.
 */
export function chatControlRoutes(): SimRoute[] {
  return [
    {
      name: 'control.chat.get',
      method: 'GET',
      pattern: /^\/__sim\/chat$/,
      auth: false,
      handle(ctx) {
        const p = part(ctx.state);
        sendJson(ctx.res, 200, { stream_delay_ms: p.streamDelayMs, streams_waiting_for_drain: p.waitingForDrain });
      },
    },
    {
      name: 'control.chat',
      method: 'POST',
      pattern: /^\/__sim\/chat$/,
      auth: false,
      handle(ctx) {
        let body: { stream_delay_ms?: unknown };
        try {
          body = JSON.parse(ctx.body.toString('utf8') || '{}');
        } catch {
          return sendJson(ctx.res, 400, { error: 'body must be JSON' });
        }
        const ms = Number(body.stream_delay_ms ?? 0);
        if (!Number.isFinite(ms) || ms < 0) return sendJson(ctx.res, 400, { error: 'stream_delay_ms must be a non-negative number' });
        part(ctx.state).streamDelayMs = ms;
        sendJson(ctx.res, 200, { stream_delay_ms: ms });
      },
    },
  ];
}

/**
 * Writes SSE frames one by one with the configured pause, waiting for 'drain' when the reader is
 * slow (as a real server does). An injected `truncate` fault cuts the stream after a few frames
 * by destroying the socket; a client that goes away stops the loop.
 */
export async function streamFrames(ctx: SimContext, frames: string[]): Promise<void> {
  const res: ServerResponse = ctx.res;
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const p = part(ctx.state);
  const delay = p.streamDelayMs;
  const cutAt = ctx.truncate ? Math.min(3, frames.length - 1) : -1;
  for (let i = 0; i < frames.length; i++) {
    if (res.destroyed) return;
    if (i === cutAt) {
      ctx.closedBySimulator = true;
      res.socket?.destroy();
      return;
    }
    if (i === cutAt - 1) {
      // The events before the cut reach the client first: wait until the socket took them.
      await new Promise<void>((r) => res.write(frames[i], () => r()));
    } else if (!res.write(frames[i])) {
      p.waitingForDrain++;
      await new Promise<void>((r) => {
        const done = () => {
          res.off('drain', done);
          res.off('close', done);
          r();
        };
        res.on('drain', done);
        res.on('close', done);
      });
      p.waitingForDrain--;
    }
    if (delay > 0) await new Promise((r) => setTimeout(r, delay));
  }
  res.end();
}

/** For a non-streamed answer with a `truncate` fault: half the body, then the socket dies. */
export function sendTruncatedJson(ctx: SimContext, body: unknown): void {
  const text = JSON.stringify(body);
  ctx.res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  ctx.res.write(text.slice(0, Math.floor(text.length / 2)));
  ctx.closedBySimulator = true;
  ctx.res.socket?.destroy();
}
