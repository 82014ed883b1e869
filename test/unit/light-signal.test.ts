import { describe, expect, it } from 'vitest';
import { request } from 'undici';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { LightSignal } from '../../src/http/departure.js';

describe('LightSignal (the chat path\'s departure signal)', () => {
  it('runs each listener once, in order, on the first abort only', () => {
    const s = new LightSignal();
    const seen: string[] = [];
    s.addEventListener('abort', () => seen.push('a'));
    s.addEventListener('abort', () => seen.push('b'));
    expect(s.aborted).toBe(false);
    s.abort();
    s.abort();
    expect(seen).toEqual(['a', 'b']);
    expect(s.aborted).toBe(true);
    expect((s.reason as DOMException).name).toBe('AbortError');
  });

  it('forgets a removed listener', () => {
    const s = new LightSignal();
    const seen: string[] = [];
    const a = () => seen.push('a');
    s.addEventListener('abort', a);
    s.addEventListener('abort', () => seen.push('b'));
    s.removeEventListener('abort', a);
    s.abort();
    expect(seen).toEqual(['b']);
  });

  it('ends an undici request in flight, as an AbortSignal does', async () => {
    // An upstream that never answers: only the signal can end the call.
    const server = createServer(() => undefined);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const s = new LightSignal();
      const call = request(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { signal: s as unknown as AbortSignal });
      setTimeout(() => s.abort(), 50);
      await expect(call).rejects.toMatchObject({ name: expect.stringMatching(/Abort/) });
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
