// The two primitives every rate limit of the gateway is built from, implemented once in memory
// (one instance) and once in Redis (shared by every instance), with the same semantics.

/** The state of one fixed window after counting a request in it. */
export interface WindowResult {
  allowed: boolean;
  limit: number;
  /** Requests still allowed in this window after this one. */
  remaining: number;
  /** Milliseconds until the window ends and the count starts again. */
  resetMs: number;
}

/** A held concurrency slot. release() is idempotent: only its first call frees the slot. */
export interface Slot {
  release(): void;
}

export interface LimitStore {
  /** Counts one request against `bucket`, a fixed window of `windowMs` allowing `limit` requests. */
  hit(bucket: string, limit: number, windowMs: number): Promise<WindowResult>;
  /** Takes back one request counted by hit() (the request was refused by a later limit). */
  unhit(bucket: string, limit: number, windowMs: number): Promise<void>;
  /** Takes one of `limit` slots of `bucket`; null when all are taken. */
  acquire(bucket: string, limit: number): Promise<Slot | null>;
  /** Slots of `bucket` currently held (for tests and metrics). */
  held(bucket: string): Promise<number>;
  close(): Promise<void>;
}

/** Wraps a release function so only its first call has an effect. */
export function onceSlot(release: () => void): Slot {
  let done = false;
  return {
    release() {
      if (done) return;
      done = true;
      release();
    },
  };
}
