/**
 * Failed console logins per client address per minute, per instance (a fixed one-minute window).
 * Every attempt is counted when it starts, so a burst of parallel guesses cannot all get in before
 * the first has failed; a login that succeeds is taken back off the count.
 */
export class LoginLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();

  constructor(private readonly perMinute: number) {}

  /** Seconds to wait when over the limit, else 0 (and the attempt is counted). */
  take(address: string, now = Date.now()): number {
    if (this.windows.size > 10_000) for (const [k, w] of this.windows) if (now - w.start >= 60_000) this.windows.delete(k);
    let w = this.windows.get(address);
    if (!w || now - w.start >= 60_000) {
      w = { start: now, count: 0 };
      this.windows.set(address, w);
    }
    if (w.count >= this.perMinute) return Math.max(1, Math.ceil((w.start + 60_000 - now) / 1000));
    w.count++;
    return 0;
  }

  /** Takes back the attempt of a login that succeeded. */
  refund(address: string, now = Date.now()): void {
    const w = this.windows.get(address);
    if (w && now - w.start < 60_000 && w.count > 0) w.count--;
  }
}
