import { errors as undiciErrors } from 'undici';

// `oversized`: an answer (or one stream event) over the gateway's caps; not retried elsewhere, since
// another channel of the same model would most likely answer the same.
export type FailureKind = 'connect' | 'timeout' | 'status' | 'malformed' | 'aborted' | 'oversized';

/** An upstream call that did not produce a usable answer. `retryable`: another channel may succeed. */
export class UpstreamFailure extends Error {
  constructor(
    readonly kind: FailureKind,
    message: string,
    readonly status = 0,
    /** The provider's own error code/type, when it sent one. */
    readonly providerCode = '',
    /** Seconds the provider asked us to wait (Retry-After), when it said. */
    readonly retryAfterS = 0,
  ) {
    super(message);
    this.name = 'UpstreamFailure';
  }

  get retryable(): boolean {
    if (this.kind === 'status') return this.status === 429 || this.status === 408 || this.status >= 500;
    return this.kind !== 'aborted' && this.kind !== 'oversized';
  }
}

/** Maps undici / socket errors to an UpstreamFailure. */
export function toUpstreamFailure(err: unknown, signal?: { readonly aborted: boolean }): UpstreamFailure {
  if (err instanceof UpstreamFailure) return err;
  if (signal?.aborted) return new UpstreamFailure('aborted', 'the client went away');
  if (err instanceof undiciErrors.HeadersTimeoutError || err instanceof undiciErrors.BodyTimeoutError) {
    return new UpstreamFailure('timeout', 'the upstream did not answer in time');
  }
  if (err instanceof undiciErrors.ConnectTimeoutError) return new UpstreamFailure('timeout', 'connecting to the upstream timed out');
  const code = (err as NodeJS.ErrnoException)?.code ?? '';
  // The address guard refused the host (address-guard.ts); the address itself is not repeated.
  if (code === 'EADDRREFUSED_GUARD' || ((err as { cause?: { code?: unknown } })?.cause?.code ?? '') === 'EADDRREFUSED_GUARD') {
    return new UpstreamFailure('connect', 'refused: the provider pointed the gateway at a host that is not a public address');
  }
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EHOSTUNREACH') {
    return new UpstreamFailure('connect', `cannot connect to the upstream (${code})`);
  }
  return new UpstreamFailure('connect', `the upstream connection failed${code ? ` (${code})` : ''}`);
}
