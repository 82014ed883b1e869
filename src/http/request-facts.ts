import { AsyncLocalStorage } from 'node:async_hooks';

// What a request came to, gathered while it runs, for its request log row (src/request-logs/):
// the usage row the ledger wrote for it (the ledger knows no request, so it finds the facts of
// the request it runs for here) and the answer's body. Only requests that are logged carry facts.

export interface UsageFacts {
  model: string;
  channel: string;
  endpoint: string;
  status: number;
  input_units?: number;
  output_units?: number;
  cost_micros?: number;
  latency_ms?: number;
}

export interface RequestFacts {
  usage: UsageFacts | null;
  /** The answer as sent whole (null: streamed, or nothing sent). */
  response: string | Buffer | null;
  /** Called once the usage is known (the log row may be waiting for it). */
  onUsage: (() => void) | null;
}

const scope = new AsyncLocalStorage<RequestFacts>();

export function newFacts(): RequestFacts {
  return { usage: null, response: null, onUsage: null };
}

/** Runs `fn` (a request's steps) with `facts` as the facts of everything it does. */
export function runWithFacts<T>(facts: RequestFacts, fn: () => T): T {
  return scope.run(facts, fn);
}

/**
 * No request is logged any more (request logs turned off): the async context is disabled, which
 * on Node 20 removes its promise hooks from the process (a later runWithFacts enables it again).
 * Requests still running lose their facts: their log rows are written without usage.
 */
export function stopFacts(): void {
  scope.disable();
}

/** The ledger wrote the request's usage row. */
export function noteUsage(usage: UsageFacts): void {
  const facts = scope.getStore();
  if (!facts || facts.usage) return;
  facts.usage = usage;
  facts.onUsage?.();
}
