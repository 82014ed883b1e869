import type { Dispatcher } from 'undici';
import { UpstreamFailure, toUpstreamFailure } from './failure.js';

/** The most of an upstream answer the gateway holds in memory at once (relay.max_body_mb / max_stream_event_mb). */
export interface AnswerLimits {
  /** A whole answer read at once (JSON answers, error bodies). */
  bodyBytes: number;
  /** One stream event, or one line of it. */
  eventBytes: number;
}

export const DEFAULT_ANSWER_LIMITS: AnswerLimits = { bodyBytes: 32 * 1024 * 1024, eventBytes: 4 * 1024 * 1024 };

const limitsOf = new WeakMap<object, AnswerLimits>();

/** Attaches the client's limits to a response it returned (UpstreamClient.send does). */
export function setAnswerLimits(res: Dispatcher.ResponseData, limits: AnswerLimits): void {
  limitsOf.set(res, limits);
}

export function answerLimitsOf(res: Dispatcher.ResponseData): AnswerLimits {
  return limitsOf.get(res) ?? DEFAULT_ANSWER_LIMITS;
}

/** The failure for an answer over a limit; the caller has already hung up on the upstream. */
export function oversized(what: string, limitBytes: number): UpstreamFailure {
  return new UpstreamFailure('oversized', `${what} is larger than the gateway accepts (${+(limitBytes / 1024 / 1024).toFixed(2)} MiB)`);
}

/**
 * Reads a whole response body as text, mapping a broken or timed-out body to UpstreamFailure. A
 * body over the response's limit is not read further: the connection is torn down (which stops the
 * upstream) and the call fails as `oversized`.
 */
export async function readText(res: Dispatcher.ResponseData, signal?: { readonly aborted: boolean }): Promise<string> {
  const max = answerLimitsOf(res).bodyBytes;
  const declared = Number(res.headers['content-length']);
  const body = res.body;
  const tooLarge = () => {
    body.on('error', () => undefined);
    body.destroy();
    return oversized('the upstream answer', max);
  };
  if (Number.isFinite(declared) && declared > max) throw tooLarge();
  // Destroyed before it was read (the call was aborted meanwhile): no event will come any more.
  if (body.destroyed) throw toUpstreamFailure(body.errored ?? new Error('the upstream answer ended before it was complete'), signal);
  // Plain 'data'/'end' listeners: lighter than an async iterator over the body, which costs a few
  // promises per chunk on every non-streamed answer.
  return new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        cleanup();
        return reject(tooLarge());
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks, size).toString('utf8'));
    };
    const onError = (err: Error) => {
      cleanup();
      reject(toUpstreamFailure(err, signal));
    };
    // A body destroyed without an error (the call aborted) ends with 'close' alone.
    const onClose = () => onError(body.errored ?? new Error('the upstream answer ended before it was complete'));
    const cleanup = () => {
      body.off('data', onData);
      body.off('end', onEnd);
      body.off('error', onError);
      body.off('close', onClose);
    };
    body.on('data', onData);
    body.once('end', onEnd);
    body.once('error', onError);
    body.once('close', onClose);
  });
}

/** Reads a JSON body; anything unparsable is a `malformed` failure. */
export async function readJsonBody(res: Dispatcher.ResponseData, signal?: { readonly aborted: boolean }): Promise<unknown> {
  return parseUpstreamJson(await readText(res, signal), res.statusCode);
}

/** Parses an upstream answer's text; anything unparsable is a `malformed` failure (retryable). */
export function parseUpstreamJson(text: string, status: number): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new UpstreamFailure('malformed', 'the upstream answered with malformed JSON', status);
  }
}
