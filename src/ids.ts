import { randomBytes } from 'node:crypto';

// Random ids for keys, tasks, holds and workers. A ground-floor module: every floor may draw one.

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

// Random bytes are drawn 4 KiB at a time: one system call serves many ids on the request path.
const POOL_SIZE = 4096;
let pool = Buffer.alloc(0);
let poolAt = 0;

function randomByte(): number {
  if (poolAt >= pool.length) {
    pool = randomBytes(POOL_SIZE);
    poolAt = 0;
  }
  return pool[poolAt++];
}

/** Uniform random base62 string (rejection sampling keeps every character equally likely). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    const byte = randomByte();
    if (byte < 248) out += BASE62[byte % 62];
  }
  return out;
}
