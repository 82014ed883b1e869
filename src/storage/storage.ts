import type { Readable } from 'node:stream';

import type { ByteRange } from '../http/byte-range.js';

export type { ByteRange };

/** Where the gateway keeps bytes it serves later (archived videos, stored images). Every method streams: no object is ever held whole in memory. */
export interface ObjectStorage {
  /** Stores `body` under `key` (replacing any earlier copy); resolves with the bytes written. */
  put(key: string, body: Readable, contentType: string): Promise<number>;
  /** The object's bytes, all or one range; rejects when the object is gone. */
  read(key: string, range?: ByteRange): Promise<Readable>;
  /** Removes the object; an absent object is not an error. */
  remove(key: string): Promise<void>;
}
