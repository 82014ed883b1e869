import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FaultBook } from './faults.js';

/** What every simulator handler gets. */
export interface SimContext {
  req: IncomingMessage;
  res: ServerResponse;
  /** Path parameters captured by the route's pattern, in order. */
  params: string[];
  url: URL;
  /** The raw request body. */
  body: Buffer;
  state: SimState;
  /** Set by an injected `truncate` fault: a streaming handler stops part-way and destroys the socket. */
  truncate?: boolean;
  /** The simulator itself cut the connection (reset, truncate): not counted as a client disconnect. */
  closedBySimulator?: boolean;
}

export interface SimState {
  faults: FaultBook;
  /** Requests seen per route name. */
  counts: Map<string, number>;
  /** Requests per route name whose client closed the connection before the answer was complete. */
  disconnects: Map<string, number>;
  /** The W3C `traceparent` of the latest requests that carried one (newest last, at most 256), by route name. */
  traceparents: { route: string; traceparent: string; tracestate?: string }[];
  /** Requests being answered right now (a connection left open upstream shows here). */
  open: number;
  /** Base URL the simulator is reachable at (set once listening). */
  baseUrl: string;
  options: SimOptions;
  /** Per-part state (tasks of the video part, …), by part name. */
  parts: Map<string, unknown>;
}

export interface SimOptions {
  /** Seconds a video task takes from queued to succeeded. */
  videoSeconds: number;
  /** Lifetime of signed video URLs, seconds. */
  urlTtlS: number;
  /** Require an Authorization / x-api-key header on API routes (true by default). */
  requireAuth: boolean;
  /**
   * Signs result URLs. Random per simulator unless given: the embedded simulator keeps one across
   * restarts (with its port), so URLs handed out before a restart still download.
   */
  signingSecret?: Buffer;
  /** Keeps the video parts' tasks in this JSON file across restarts (the embedded simulator; video-common.ts). */
  tasksFile?: string;
}

export interface SimRoute {
  /** Name used for stats and fault matching, e.g. "openai.chat". */
  name: string;
  method: string;
  pattern: RegExp;
  /** API routes need a key, like the real provider; control and asset routes do not. */
  auth: boolean;
  /** Injected faults apply to this route although it needs no key (signed downloads). */
  faults?: boolean;
  handle(ctx: SimContext): void | Promise<void>;
  /** The provider's error body for an injected status fault (OpenAI's shape when absent). */
  errorBody?(status: number, message: string): unknown;
  /**
   * The provider's own credential check, for providers whose key is not a plain Authorization or
   * x-api-key header (Gemini's x-goog-api-key, Kling's signed JWT): answers the provider's error
   * itself and returns false when the request is not authorized. Replaces the generic check.
   */
  authenticate?(ctx: SimContext): boolean;
  /**
   * For a path two parts share on the simulator's one origin (Kling's and OpenAI's
   * /v1/images/generations; fal's and Replicate's image and video parts): whether this request is
   * this route's; the next route with the pattern gets it when not.
   */
  claims?(req: IncomingMessage, url: URL, state: SimState): boolean;
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** Parses the body as JSON; answers 400 in the given shape and returns undefined when it is not. */
export function readJson(ctx: SimContext, errorShape: (message: string) => unknown): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(ctx.body.toString('utf8'));
    if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    // fall through
  }
  sendJson(ctx.res, 400, errorShape('The request body is not a JSON object.'));
  return undefined;
}
