import { GatewayError } from '../http/errors.js';
import type { ModelConfig } from '../config/schema.js';

// The 403 of a key whose balance cannot cover a request's hold. "Exhausted" misled when the
// balance was positive but below the hold (a chat request without max_tokens holds for 4096 output
// tokens): the message says what the request needed, what is left and, for chat, the largest
// max_tokens that would fit now.

/** Micro-dollars as readable USD: at least two decimals, up to six, no trailing zeros past two. */
export function formatUsd(micros: number): string {
  const s = (Math.max(0, micros) / 1_000_000).toFixed(6).replace(/0{1,4}$/, '');
  return `$${s}`;
}

/** What a refused request could change to fit the balance; undefined when nothing would. */
export type FitHint = (balanceMicros: number) => string | undefined;

export function creditRefusal(neededMicros: number, balanceMicros: number, hint?: FitHint, owedMicros = 0): GatewayError {
  if (owedMicros > 0) {
    return new GatewayError(
      403,
      'insufficient_quota',
      `This key owes ${formatUsd(owedMicros)}: earlier requests cost more than the credit it had. It is refused until the operator tops it up (a top-up pays what is owed first).`,
    );
  }
  if (balanceMicros <= 0) return new GatewayError(403, 'insufficient_quota', 'The credit of this key is exhausted. Ask the operator to top it up.');
  const fits = hint?.(balanceMicros);
  return new GatewayError(
    403,
    'insufficient_quota',
    `This request needs ${formatUsd(neededMicros)} of credit to be held, but the key has ${formatUsd(balanceMicros)} left.` +
      (fits ? ` ${fits}` : '') +
      ' Ask the operator to top it up for more.',
  );
}

/**
 * For chat: the largest output cap the balance holds after the input estimate, named as the
 * client's field (`max_tokens`, or `max_completion_tokens`).
 */
export function chatFitHint(model: ModelConfig, inputTokens: number, field: string, defaultCap?: number): FitHint {
  return (balance) => {
    const inPrice = model.price?.input_per_million ?? 0;
    const outPrice = model.price?.output_per_million ?? 0;
    if (outPrice <= 0) return undefined;
    // Adding `"field":N` to the body grows the input estimate (a token per byte) a little: count it,
    // so the suggested value fits when sent.
    const input = inputTokens + field.length + 16;
    const tokens = Math.floor((balance - Math.ceil(input * inPrice)) / outPrice);
    if (tokens < 1) return undefined;
    const why = defaultCap ? ` (without ${field}, credit is held for ${defaultCap} output tokens)` : '';
    return `A request with ${field} of at most ${tokens} fits${why}.`;
  };
}
