import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../services.js';
import { principalOf } from '../auth/hook.js';
import { mayUseModel } from '../auth/principal.js';
import type { ChatFormat, ReportedUsage } from '../formats/chat-stream.js';
import { DEFAULT_ANTHROPIC_MAX_TOKENS } from '../formats/anthropic/request.js';
import { CHAT_CODECS } from '../formats/index.js';
import { errors, statusOf } from '../http/errors.js';
import { redact } from '../http/redact.js';
import { clientGone, clientStillThere } from '../http/departure.js';
import { believableCount } from '../upstream/usage-number.js';
import type { Hold } from '../limits/credit.js';
import { claimUsageRow } from '../limits/usage-backstop.js';
import { chatCostMicros } from '../limits/pricing.js';
import { chatFitHint } from '../limits/credit-refusal.js';
import { inputTokenBound } from '../limits/estimate.js';
import type { CatalogModel } from '../relay/catalog.js';
import type { Target } from '../upstream/target.js';
import { ChatRelay, type ChatCall } from '../relay/chat.js';
import { UpstreamFailure } from '../upstream/failure.js';
import { CLIENT_CLOSED, pipeChatStream } from './chat-stream.js';

// The flow every chat endpoint shares (Chat Completions, Messages, Responses, Gemini): model →
// credit hold → relay (with fallback) → answer in the client's format → settle from the reported
// usage → one ledger row.

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
  read?(request: FastifyRequest): { body: Record<string, unknown>; stream: boolean };
  /** Before the credit hold: the Responses API resolves its stored state here. */
  prepare?(request: FastifyRequest, call: ChatCall): Promise<void>;
  /** The whole answer went out (its body in the client's format): the Responses API stores it. */
  finished?(request: FastifyRequest, call: ChatCall, answer: Record<string, unknown>): Promise<void>;
}

/** The model a chat request names, if this key may use it as a chat model. */
function chatModel(services: Services, request: FastifyRequest, id: string): CatalogModel {
  const model = services.catalog.get(id);
  if (!model) throw errors.modelNotFound(id);
  if (!mayUseModel(principalOf(request), id)) throw errors.modelNotAllowed(id);
  if (model.config.kind !== 'chat') throw errors.invalidRequest(`The model "${id}" is not a chat model.`, 'model');
  return model;
}

export function chatHandler(services: Services, spec: ChatRouteSpec) {
  const chat = new ChatRelay(services.upstream);
  const { client, endpoint } = spec;

  return async function handleChat(request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
    const started = Date.now();
    const principal = principalOf(request);
    const { body, stream } = spec.read ? spec.read(request) : { body: request.body as Record<string, unknown>, stream: (request.body as Record<string, unknown>).stream === true };
    const model = chatModel(services, request, body.model as string);
    const includeUsage = stream && CHAT_CODECS[client].wantsUsage?.(body) === true;
    // The client leaving (noticed from the request's first moment) aborts the upstream call at once;
    // one that left while its credit was being held gets no upstream call at all.
    const signal = request.departed;
    const call: ChatCall = { client, body, stream, includeUsage, signal };
    if (spec.prepare) await spec.prepare(request, call);
    // A body the gateway expanded (stored Responses state) is measured as sent upstream.
    const bytes = call.body === body ? Number(request.headers['content-length'] ?? 0) : 0;
    const estimate = estimateChatTokens(client, call.body, bytes, model.config.image_input_tokens);
    const cap = maxTokensOf(client, call.body);
    const fit = chatFitHint(model.config, estimate.input, cap.field, cap.value === undefined ? DEFAULT_OUTPUT_CAP : undefined);
    let channel = '';
    const record = (status: number, input: number, output: number, cost: number, overage = 0) => {
      if (!claimUsageRow(request)) return;
      services.ledger.record({ key_id: principal.keyId, model: model.id, channel, endpoint, status, input_units: input, output_units: output, cost_micros: cost, overage_micros: overage, latency_ms: Date.now() - started });
    };
    const gone = () => {
      // The client is gone: nobody to answer, nothing to bill.
      record(CLIENT_CLOSED, 0, 0, 0);
      reply.hijack();
      reply.raw.destroy();
      return reply;
    };
    if (clientGone(request)) return gone();
    const hold = await services.credit.reserve(principal, chatCostMicros(model.config, estimate.input, estimate.output), fit);
    const settle = async (status: number, input: number, output: number) => {
      const cost = chatCostMicros(model.config, input, output);
      const settled = await services.credit.settle(hold, cost);
      record(status, input, output, settled?.chargedMicros ?? cost, settled?.overageMicros ?? 0);
    };

    const canRetry = () => !reply.raw.headersSent && !signal.aborted;
    const via =
      <T>(attempt: (t: Target) => Promise<T>) =>
      (t: Target): Promise<T> => {
        channel = t.channel.name;
        return attempt(t);
      };

    try {
      if (!(await clientStillThere(signal))) throw new UpstreamFailure('aborted', 'the client went away');
      if (!stream) {
        const answer = await services.relay.run(model, via((t) => chat.complete(call, t)), { canRetry });
        const usage = believableUsage(answer.usage, estimate);
        await settle(200, usage.input ?? estimate.input, usage.output ?? 0);
        if (spec.finished) {
          await spec.finished(request, call, JSON.parse(answer.payload) as Record<string, unknown>).catch((err: Error) => request.log.error({ err: err.message }, 'storing an answer failed'));
        }
        return reply.header('content-type', 'application/json; charset=utf-8').send(redact(answer.payload));
      }
      const opened = await services.relay.run(model, via((t) => chat.open(call, t)), { canRetry });
      const store = spec.finished;
      const final = () => opened.translator.final?.() as Record<string, unknown> | undefined;
      const beforeEnd = store
        ? async () => {
            const answer = final();
            if (answer) await store(request, call, answer).catch((err: Error) => request.log.error({ err: err.message }, 'storing a streamed answer failed'));
          }
        : undefined;
      const outcome = await pipeChatStream(reply, client, opened, signal, beforeEnd);
      if (outcome.failure?.retryable) services.relay.breaker(channel).failure();
      if (outcome.failure) request.log.warn({ channel, err: outcome.failure.message }, 'upstream stream broke mid-way');
      const used = deliveredUsage(believableUsage(opened.translator.usage, estimate), opened.translator.complete, opened.translator.deliveredTokens, estimate);
      // The answer is out: a failing settle can only be logged now.
      await settle(outcome.status, used.input, used.output).catch((err: Error) => request.log.error({ err: err.message }, 'settling a chat stream failed'));
      return reply;
    } catch (err) {
      await releaseQuietly(services, hold);
      if (err instanceof UpstreamFailure && err.kind === 'aborted') return gone();
      record(statusOf(err), 0, 0, 0);
      throw err;
    }
  };
}

/** The provider's usage with any count that is not believable (1e30, negative, not a number) replaced by the estimate. */
function believableUsage(usage: ReportedUsage, estimate: TokenEstimate): ReportedUsage {
  return { input: believableCount(usage.input, estimate.input), output: believableCount(usage.output, estimate.output) };
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

async function releaseQuietly(services: Services, hold: Hold): Promise<void> {
  try {
    await services.credit.release(hold);
  } catch (err) {
    process.stderr.write(`mediagate: releasing a credit hold failed: ${(err as Error).message}\n`);
  }
}
