import type { GatewayRequest, Reply } from '../pipeline/request.js';
import type { Services } from '../services.js';
import { principalOf } from '../auth/hook.js';
import type { ChatFormat, ReportedUsage } from '../formats/chat-stream.js';
import { DEFAULT_ANTHROPIC_MAX_TOKENS } from '../formats/anthropic/request.js';
import { CHAT_CODECS } from '../formats/index.js';
import { statusOf } from '../http/errors.js';
import { redact } from '../http/redact.js';
import { clientGone } from '../http/departure.js';
import { believableCount } from '../upstream/usage-number.js';
import { claimUsageRow } from '../limits/usage-backstop.js';
import { chatHoldMicros, chatQuote, type CacheTokens } from '../limits/pricing.js';
import { chatFitHint } from '../limits/credit-refusal.js';
import { inputTokenBound } from '../limits/estimate.js';
import { ChatRelay, type ChatCall, type OpenedStream } from '../relay/chat.js';
import { CLIENT_CLOSED, meteredCall, resolveModel, type MeteredRequest } from '../relay/metered.js';
import { pipeChatStream } from './chat-stream.js';
import { sampled } from '../telemetry/trace.js';

// The flow every chat endpoint shares (Chat Completions, Messages, Responses, Gemini): the metered
// call of relay/metered.ts (model → credit hold → relay with fallback → settle → one ledger row)
// with the answer in the client's format and the usage it reports.

/** The output a request without a max tokens field is reserved for (and Anthropic is asked for). */
export const DEFAULT_OUTPUT_CAP = DEFAULT_ANTHROPIC_MAX_TOKENS;

export interface TokenEstimate {
  input: number;
  output: number;
}

/**
 * What a request may cost at most, to reserve before the call: input bounded from above (see
 * limits/estimate.ts), output = the client's max tokens or the default cap.
 */
export function estimateChatTokens(client: ChatFormat, body: Record<string, unknown>, contentLength: number, imageTokens?: number): TokenEstimate {
  const max = maxTokensOf(client, body).value;
  return { input: inputTokenBound(body, contentLength, imageTokens), output: typeof max === 'number' && max > 0 ? max : DEFAULT_OUTPUT_CAP };
}

/** The output cap a client set, and the name of its field (for the credit refusal's hint). */
function maxTokensOf(client: ChatFormat, body: Record<string, unknown>): { field: string; value: unknown } {
  return CHAT_CODECS[client].outputCap(body);
}

/** What one chat endpoint adds to the shared flow. */
export interface ChatRouteSpec {
  client: ChatFormat;
  /** The ledger's endpoint name. */
  endpoint: string;
  /** The body as the relay takes it and whether it streams (Gemini names both in the URL). */
  read?(request: GatewayRequest): { body: Record<string, unknown>; stream: boolean };
  /** Before the credit hold: the Responses API resolves its stored state here. */
  prepare?(request: GatewayRequest, call: ChatCall): Promise<void>;
  /** The whole answer went out (its body in the client's format): the Responses API stores it. */
  finished?(request: GatewayRequest, call: ChatCall, answer: Record<string, unknown>): Promise<void>;
}

/** The handler of a chat route. */
export function chatHandler(services: Services, spec: ChatRouteSpec) {
  const chat = new ChatRelay(services.upstream);
  const { client, endpoint } = spec;

  return async function handleChat(request: GatewayRequest, reply: Reply): Promise<unknown> {
    const started = Date.now();
    const principal = principalOf(request);
    const { body, stream } = spec.read ? spec.read(request) : { body: request.body as Record<string, unknown>, stream: (request.body as Record<string, unknown>).stream === true };
    const model = resolveModel(services.catalog, principal, body.model as string, 'chat', (m) => `The model "${m.id}" is not a chat model.`);
    const includeUsage = stream && CHAT_CODECS[client].wantsUsage?.(body) === true;
    // The client leaving (noticed from the request's first moment) aborts the upstream call at once;
    // one that left while its credit was being held gets no upstream call at all.
    const signal = request.departure;
    const call: ChatCall = { client, body, stream, includeUsage, signal };
    if (spec.prepare) await spec.prepare(request, call);
    // A body the gateway expanded (stored Responses state) counts as the route measured it, else as sent upstream.
    const bytes = call.bodyBytes ?? (call.body === body ? Number(request.headers['content-length'] ?? 0) : 0);
    const estimate = estimateChatTokens(client, call.body, bytes, model.config.image_input_tokens);
    const cap = maxTokensOf(client, call.body);
    const metered: MeteredRequest = {
      principal,
      model,
      endpoint,
      trace: request.trace,
      started,
      claimRow: () => claimUsageRow(request),
      departed: signal,
      gone: () => clientGone(request),
      goneMessage: 'The client closed the request before the answer was ready.',
      holdMicros: chatHoldMicros(model.config, estimate.input, estimate.output),
      fit: chatFitHint(model.config, estimate.input, cap.field, cap.value === undefined ? DEFAULT_OUTPUT_CAP : undefined),
    };
    const charge = (status: number, input: number, output: number, cache: CacheTokens = {}) => {
      const q = chatQuote(model.config, input, output, cache);
      return { status, input, output, costMicros: q.micros, billedBy: q.billedBy };
    };
    const runOptions = { canRetry: () => !reply.raw.headersSent && !signal.aborted };

    try {
      if (!stream) {
        const answer = await meteredCall(
          services,
          metered,
          (t) => chat.complete(call, t),
          async (answer) => {
            const usage = believableUsage(answer.usage, estimate);
            return { value: answer, ...charge(200, usage.input ?? estimate.input, usage.output ?? 0, cacheOf(usage)), ...(sampled(request.trace) ? factsOf(answer.body) : {}) };
          },
          runOptions,
        );
        if (spec.finished) {
          await spec.finished(request, call, JSON.parse(answer.payload) as Record<string, unknown>).catch((err: Error) => request.log.error({ err: err.message }, 'storing an answer failed'));
        }
        return reply.header('content-type', 'application/json; charset=utf-8').send(redact(answer.payload));
      }
      return await meteredCall(
        services,
        metered,
        (t) => chat.open(call, t),
        // Not an async function: nothing of it stays suspended while the stream is held, only the
        // continuation below.
        (opened, { channel }) => {
          const facts = sampled(request.trace) ? watchStreamFacts(opened) : null;
          const store = spec.finished;
          const beforeEnd = store
            ? async () => {
                const answer = opened.translator.final?.() as Record<string, unknown> | undefined;
                if (answer) await store(request, call, answer).catch((err: Error) => request.log.error({ err: err.message }, 'storing a streamed answer failed'));
              }
            : undefined;
          return pipeChatStream(reply, client, opened, signal, beforeEnd).then((outcome) => {
            if (outcome.failure?.retryable) services.relay.breaker(channel).failure();
            if (outcome.failure) request.log.warn({ channel, err: outcome.failure.message }, 'upstream stream broke mid-way');
            const reported = believableUsage(opened.translator.usage, estimate);
            const used = deliveredUsage(reported, opened.translator.complete, opened.translator.deliveredTokens, estimate);
            return {
              value: reply,
              ...charge(outcome.status, used.input, used.output, cacheOf(reported)),
              ...facts?.(),
              // The answer is out: a failing settle can only be logged now.
              settleFailed: (err: Error) => request.log.error({ err: err.message }, 'settling a chat stream failed'),
            };
          });
        },
        runOptions,
      );
    } catch (err) {
      if (statusOf(err) !== CLIENT_CLOSED) throw err;
      // The client is gone: nobody to answer (its row is written, nothing billed).
      reply.hijack();
      reply.raw.destroy();
      return reply;
    }
  };
}

export interface AnswerFacts {
  responseModel?: string;
  finishReasons?: string[];
}

/**
 * For the trace: the model an answer names and why it stopped, in whichever client format it is
 * (Chat Completions, Responses, Messages, Gemini).
 */
function factsOf(a: Record<string, unknown>): { responseModel?: string; finishReasons: string[] } {
  const reasons: string[] = [];
  const list = Array.isArray(a.choices) ? a.choices : Array.isArray(a.candidates) ? a.candidates : [];
  for (const c of list as Record<string, unknown>[]) {
    const r = c?.finish_reason ?? c?.finishReason;
    if (typeof r === 'string') reasons.push(r);
  }
  if (typeof a.stop_reason === 'string') reasons.push(a.stop_reason);
  if (a.object === 'response' && typeof a.status === 'string') reasons.push(a.status);
  const model = typeof a.model === 'string' ? a.model : typeof a.modelVersion === 'string' ? a.modelVersion : undefined;
  return { responseModel: model, finishReasons: reasons };
}

/** Responses API events that carry the finished response. */
const RESPONSE_ENDS = new Set(['response.completed', 'response.incomplete', 'response.failed']);

/**
 * For the trace of a sampled stream: reads the client events the stream's translator makes (its
 * first frames included) for the model they name and why the answer stopped, in whichever client
 * format it is: Chat Completions and Gemini chunks, a Messages `message_start` and
 * `message_delta`, a Responses end event. Returns what was seen so far.
 */
export function watchStreamFacts(opened: OpenedStream): () => AnswerFacts {
  let model: string | undefined;
  const reasons: string[] = [];
  const read = (frames: string | null) => {
    if (!frames) return;
    for (const line of frames.split('\n')) {
      if (!line.startsWith('data:')) continue;
      const data = line.slice(5).trim();
      if (!data.startsWith('{')) continue;
      let e: Record<string, unknown>;
      try {
        e = JSON.parse(data) as Record<string, unknown>;
      } catch {
        continue;
      }
      let f: ReturnType<typeof factsOf>;
      if (e.type === 'message_start' && e.message && typeof e.message === 'object') f = factsOf(e.message as Record<string, unknown>);
      else if (typeof e.type === 'string' && RESPONSE_ENDS.has(e.type) && e.response && typeof e.response === 'object') f = factsOf(e.response as Record<string, unknown>);
      else if (typeof e.type === 'string' && e.type.startsWith('response.')) continue;
      else f = factsOf(e);
      const delta = e.delta as Record<string, unknown> | undefined;
      if (e.type === 'message_delta' && typeof delta?.stop_reason === 'string') f.finishReasons.push(delta.stop_reason);
      model ??= f.responseModel;
      reasons.push(...f.finishReasons);
    }
  };
  const t = opened.translator;
  const push = t.push.bind(t);
  const end = t.end.bind(t);
  t.push = (ev) => {
    const out = push(ev);
    read(out);
    return out;
  };
  t.end = () => {
    const out = end();
    read(out);
    return out;
  };
  read(opened.first);
  return () => ({ responseModel: model, finishReasons: reasons });
}

/**
 * The provider's usage with any count that is not believable (1e30, negative, not a number)
 * replaced by the estimate; a cache count that is not believable counts as none (priced as input).
 */
function believableUsage(usage: ReportedUsage, estimate: TokenEstimate): ReportedUsage {
  return {
    input: believableCount(usage.input, estimate.input),
    output: believableCount(usage.output, estimate.output),
    cachedInput: usage.cachedInput == null ? null : believableCount(usage.cachedInput, 0),
    cacheWrite: usage.cacheWrite == null ? null : believableCount(usage.cacheWrite, 0),
  };
}

/** The prompt-cache tokens a usage reports, for the price (chatQuote caps them at the input). */
function cacheOf(usage: ReportedUsage): CacheTokens {
  return { cached: usage.cachedInput ?? 0, written: usage.cacheWrite ?? 0 };
}

/**
 * Tokens to bill for a stream: what the upstream reported when the stream was whole; when it was
 * cut (by the client or the upstream), the input as reported or estimated and the output actually
 * delivered, never more than the reservation assumed.
 */
export function deliveredUsage(usage: ReportedUsage, complete: boolean, delivered: number, estimate: TokenEstimate): TokenEstimate {
  const input = usage.input ?? estimate.input;
  if (complete && usage.output !== null) return { input, output: usage.output };
  return { input, output: Math.min(estimate.output, Math.max(usage.output ?? 0, delivered)) };
}
