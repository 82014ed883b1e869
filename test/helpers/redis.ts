import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

export const REDIS_URL = process.env.MEDIAGATE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A `redis` config section with a random key prefix, and a function deleting every key under it. */
export function freshRedisPrefix(): { config: { url: string; key_prefix: string }; cleanup(): Promise<number> } {
  const key_prefix = `mgtest:${randomBytes(6).toString('hex')}:`;
  return {
    config: { url: REDIS_URL, key_prefix },
    async cleanup() {
      const redis = new Redis(REDIS_URL);
      try {
        let deleted = 0;
        let cursor = '0';
        do {
          const [next, keys] = await redis.scan(cursor, 'MATCH', `${key_prefix}*`, 'COUNT', 500);
          cursor = next;
          if (keys.length) deleted += await redis.del(...keys);
        } while (cursor !== '0');
        return deleted;
      } finally {
        redis.disconnect();
      }
    },
  };
}

/** Keys currently stored under a prefix. */
export async function keysUnder(prefix: string): Promise<string[]> {
  const redis = new Redis(REDIS_URL);
  try {
    return await redis.keys(`${prefix}*`);
  } finally {
    redis.disconnect();
  }
}
