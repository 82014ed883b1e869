import type { ServerResponse } from 'node:http';
import { sendJson, type SimContext, type SimRoute, type SimState } from './router.js';
import { countTokens, DEFAULT_OUTPUT_TOKENS, TokenBudget } from './tokens.js';
import { writeSchemaValue, writeToolArguments } from './schema-value.js';

// The simulator's chat "model", shared by its four wire formats: deterministic answers that tests
// can assert (an echo of the prompt, or a call of the first tool with arguments taken from the
// prompt), token counts consistent with what is sent, never more output than the request's max
// tokens (or DEFAULT_OUTPUT_TOKENS), and paced streaming.

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
  /** The request's max tokens (checked against MAX_OUTPUT_TOKENS), or null for the default. */
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
  /** Of the input, tokens reported as read from the prompt cache (`[sim:cached=N]` in the request). */
  cachedTokens: number;
  /** Of the input, tokens reported as written to the prompt cache (`[sim:cache_write=N]`; Messages only). */
  cacheWriteTokens: number;
  /** Reasoning pieces (one token each), shown before the answer when the client asked for it. */
  thought: string[];
}

/**
 * The prompt-cache counts a request asks the simulator to report: `[sim:cached=N]` and
 * `[sim:cache_write=N]` anywhere in its texts (the last of each wins), never more than the input.
 */
function cacheMarkers(texts: string[], inputTokens: number): { cachedTokens: number; cacheWriteTokens: number } {
  let cached = 0;
  let written = 0;
  for (const t of texts) {
    if (!t.includes('[sim:cache')) continue;
    for (const m of t.matchAll(/\[sim:(cached|cache_write)=(\d{1,9})\]/g)) {
      if (m[1] === 'cached') cached = Number(m[2]);
      else written = Number(m[2]);
    }
  }
  const cachedTokens = Math.min(cached, inputTokens);
  return { cachedTokens, cacheWriteTokens: Math.min(written, inputTokens - cachedTokens) };
}

/** Images count as a fixed 85 tokens (OpenAI's low-detail price). */
const IMAGE_TOKENS = 85;

/** The text of a message's content in either format: a string, or the `text` parts of a list. */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((p: { type?: unknown; text?: unknown } | null) => p?.type === 'text' && typeof p.text === 'string')
    .map((p: { text: string }) => p.text)
    .join(' ');
}

/**
 * The answer, written against one output budget (the request's max tokens, or the default) in the
 * order it is sent: the thought, then the text or the tool call. Whatever does not fit is left out
 * and the answer ends with the length finish reason.
 */
export function answer(c: SimConversation): SimAnswer {
  const inputTokens = countTokens(c.texts) + c.images * IMAGE_TOKENS;
  const cache = cacheMarkers(c.texts, inputTokens);
  const budget = new TokenBudget(c.maxTokens ?? DEFAULT_OUTPUT_TOKENS);
  const thought: string[] = [];
  if (c.reasoning) budget.take(`The user wrote: ${c.prompt}`, thought);
  const pieces: string[] = [];
  // A forced tool is called even after a tool result (as real models do when the client insists).
  const forced = c.forcedTool !== null && !c.toolsOff;
  if (c.tools.length && !c.toolsOff && (c.toolResult === null || forced)) {
    const tool = (c.forcedTool && c.forcedTool !== 'any' && c.tools.find((t) => t.name === c.forcedTool)) || c.tools[0];
    budget.take(`Calling ${tool.name}.`, pieces);
    const argPieces: string[] = [];
    writeToolArguments(tool.schema ?? {}, c.prompt, budget, argPieces);
    return { pieces, tool: { name: tool.name, args: argPieces.join(''), argPieces }, finish: budget.cut ? 'length' : 'tool', stopSequence: null, inputTokens, ...cache, thought };
  }
  if (c.json) {
    const said = c.toolResult !== null ? `Tool result: ${c.toolResult}` : c.prompt;
    if (c.json.schema) writeSchemaValue(c.json.schema, said, budget, pieces);
    else budget.take(JSON.stringify({ answer: said }), pieces);
    return { pieces, tool: null, finish: budget.cut ? 'length' : 'end', stopSequence: null, inputTokens, ...cache, thought };
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
  budget.take(text, pieces);
  if (budget.cut) return { pieces, tool: null, finish: 'length', stopSequence: null, inputTokens, ...cache, thought };
  return { pieces, tool: null, finish, stopSequence, inputTokens, ...cache, thought };
}

/** A tool call's arguments as an object (Anthropic's `input`, Gemini's `args`): {} when max tokens cut them. */
export function toolInput(a: SimAnswer): Record<string, unknown> {
  return a.tool && a.finish !== 'length' ? (JSON.parse(a.tool.args) as Record<string, unknown>) : {};
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

/** Frames written between two turns of the event loop when the stream has no pause. */
const BURST = 16;

/**
 * Writes SSE frames one by one with the configured pause, waiting for 'drain' when the reader is
 * slow (as a real server does). Frames are made as they are sent, so a long answer held back by a
 * slow reader holds no list of them. An injected `truncate` fault cuts the stream after a few
 * frames by destroying the socket; a client that goes away stops the loop.
 */
export async function streamFrames(ctx: SimContext, frames: Iterable<string>): Promise<void> {
  const res: ServerResponse = ctx.res;
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const p = part(ctx.state);
  const delay = p.streamDelayMs;
  // The cut needs the number of frames (a short stream is cut before its last): only then listed.
  const all = ctx.truncate ? [...frames] : frames;
  const cutAt = Array.isArray(all) ? Math.min(3, all.length - 1) : -1;
  let i = 0;
  for (const frame of all) {
    if (res.destroyed) return;
    if (i === cutAt) {
      ctx.closedBySimulator = true;
      res.socket?.destroy();
      return;
    }
    if (i === cutAt - 1) {
      // The events before the cut reach the client first: wait until the socket took them.
      await new Promise<void>((r) => res.write(frame, () => r()));
    } else if (!res.write(frame)) {
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
    i++;
    if (delay > 0) await new Promise((r) => setTimeout(r, delay));
    // A reader that keeps up never pushes back, and a long answer would then be written in one go:
    // other work (the gateway, when the simulator is embedded) gets its turn between bursts.
    else if (i % BURST === 0) await new Promise((r) => setImmediate(r));
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
