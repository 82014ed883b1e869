/**
 * A circuit breaker per channel: after `failures` consecutive failures the channel is skipped
 * for `cooldownMs`; then exactly one probe request is let through. A success closes it.
 */
export class CircuitBreaker {
  private consecutive = 0;
  private openUntil = 0;
  private probing = false;

  constructor(
    private readonly failures: number,
    private readonly cooldownMs: number,
  ) {}

  /** Whether a request may go to this channel now (claims the probe slot when half-open). */
  tryAcquire(now = Date.now()): boolean {
    if (this.consecutive < this.failures) return true;
    if (now < this.openUntil || this.probing) return false;
    this.probing = true;
    return true;
  }

  /** For operators: `open` while the channel is skipped, `half_open` when the next request is a probe. */
  state(now = Date.now()): 'closed' | 'open' | 'half_open' {
    if (this.consecutive < this.failures) return 'closed';
    return now < this.openUntil || this.probing ? 'open' : 'half_open';
  }

  success(): void {
    this.consecutive = 0;
    this.probing = false;
  }

  failure(now = Date.now()): void {
    this.consecutive += 1;
    this.probing = false;
    if (this.consecutive >= this.failures) this.openUntil = now + this.cooldownMs;
  }
}
