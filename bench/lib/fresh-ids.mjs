// Targets whose header values hold the placeholder [<id>] (autocannon's idReplacement tag) send
// a value of their own with every request: a fresh Idempotency-Key, say.
import { randomUUID } from 'node:crypto';

const prefix = randomUUID();
let count = 0;

/** The target's headers, each [<id>] replaced by an id no other request of this process sent. */
export function withIds(t) {
  if (!t.ids) return t.headers;
  const id = `${prefix}-${++count}`;
  return Object.fromEntries(Object.entries(t.headers ?? {}).map(([k, v]) => [k, String(v).replaceAll('[<id>]', id)]));
}
