import { afterEach, describe, expect, it } from 'vitest';
import { MemoryLimitStore, windowId } from '../../src/limits/memory-store.js';

// The in-memory concurrency slots: counted per bucket, each slot freed once, the limit applying
// again after releases (the counter of a bucket is kept between requests, not rebuilt).

describe('memory limit store slots', () => {
  const store = new MemoryLimitStore();
  afterEach(() => store.close());

  it('admits up to the limit, frees each slot once, and admits again after a release', async () => {
    const a = store.acquireNow('key:a', 2);
    const b = store.acquireNow('key:a', 2);
    expect(a).not.toBeNull();
    expect(b).not.toBeNull();
    expect(store.acquireNow('key:a', 2)).toBeNull();
    // Another bucket has its own count.
    expect(store.acquireNow('key:b', 1)).not.toBeNull();
    a!.release();
    a!.release();
    expect(await store.held('key:a')).toBe(1);
    const c = store.acquireNow('key:a', 2);
    expect(c).not.toBeNull();
    expect(store.acquireNow('key:a', 2)).toBeNull();
    b!.release();
    c!.release();
    expect(await store.held('key:a')).toBe(0);
    // Idle, the bucket starts over with its whole limit.
    const again = [store.acquireNow('key:a', 2), store.acquireNow('key:a', 2), store.acquireNow('key:a', 2)];
    expect(again.map((s) => s !== null)).toEqual([true, true, false]);
  });

  it('counts a window by its id as by its bucket', () => {
    const first = store.hitNow('key:w', 3, 60_000, 1000);
    expect(first).toMatchObject({ allowed: true, remaining: 2 });
    // The rate limits keep the window's id and count by it: the same window.
    store.hitWindow(windowId('key:w', 3, 60_000), 3, 60_000, 1001);
    store.hitWindow(windowId('key:w', 3, 60_000), 3, 60_000, 1002);
    expect(store.hitNow('key:w', 3, 60_000, 1003)).toMatchObject({ allowed: false, remaining: 0 });
  });
});
