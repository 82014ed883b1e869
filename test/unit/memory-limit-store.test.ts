import { afterEach, describe, expect, it } from 'vitest';
import { MemoryLimitStore } from '../../src/limits/memory-store.js';

// The memory store keeps a bucket's slot counter when it falls to 0 and a window's id per bucket
// (no map churn on the request path); what a caller sees must be the same as before.
describe('MemoryLimitStore', () => {
  let store: MemoryLimitStore;
  afterEach(() => store.close());

  it('holds at most `limit` slots, frees one per first release only, and starts again from 0', async () => {
    store = new MemoryLimitStore();
    const a = store.acquireNow('key:1', 2);
    const b = store.acquireNow('key:1', 2);
    expect(a && b).toBeTruthy();
    expect(store.acquireNow('key:1', 2)).toBeNull();
    expect(await store.held('key:1')).toBe(2);
    a!.release();
    a!.release();
    expect(await store.held('key:1')).toBe(1);
    const c = store.acquireNow('key:1', 2);
    expect(c).not.toBeNull();
    expect(store.acquireNow('key:1', 2)).toBeNull();
    b!.release();
    c!.release();
    expect(await store.held('key:1')).toBe(0);
    // Emptied and used again, many times over: the count never drifts.
    for (let i = 0; i < 1000; i++) store.acquireNow('key:1', 1)!.release();
    expect(await store.held('key:1')).toBe(0);
    expect(store.acquireNow('key:1', 1)).not.toBeNull();
    expect(store.acquireNow('key:2', 1)).not.toBeNull();
    expect(await store.held('key:2')).toBe(1);
  });

  it('counts a bucket per limit: a changed limit starts its own window, and the old one is still there', () => {
    store = new MemoryLimitStore();
    const now = 1_000_000;
    expect(store.hitNow('key:1', 2, 60_000, now).allowed).toBe(true);
    expect(store.hitNow('key:1', 2, 60_000, now).allowed).toBe(true);
    expect(store.hitNow('key:1', 2, 60_000, now)).toMatchObject({ allowed: false, remaining: 0 });
    expect(store.hitNow('key:1', 5, 60_000, now)).toMatchObject({ allowed: true, remaining: 4 });
    expect(store.hitNow('key:1', 2, 60_000, now)).toMatchObject({ allowed: false, remaining: 0 });
    expect(store.hitNow('key:1', 2, 1_000, now)).toMatchObject({ allowed: true, remaining: 1, resetMs: 1_000 });
  });
});
