import type { Readable } from 'node:stream';
import type { StorageConfig } from '../../config/schema.js';
import { LocalStorage } from './local-storage.js';
import { S3Storage } from './s3-storage.js';

/** A byte range, both ends inclusive (as in HTTP's Range and Content-Range). */
export interface ByteRange {
  start: number;
  end: number;
}

/** Where archived videos live. Every method streams: no video is ever held whole in memory. */
export interface VideoStorage {
  /** Stores `body` under `key` (replacing any earlier copy); resolves with the bytes written. */
  put(key: string, body: Readable, contentType: string): Promise<number>;
  /** The object's bytes, all or one range; rejects when the object is gone. */
  read(key: string, range?: ByteRange): Promise<Readable>;
  /** Removes the object; an absent object is not an error. */
  remove(key: string): Promise<void>;
}

/** The storage `storage.type` names, or null for `none`. */
export function createStorage(config: StorageConfig): VideoStorage | null {
  switch (config.type) {
    case 'local':
      return new LocalStorage(config.dir);
    case 's3':
      return new S3Storage(config.s3!);
    default:
      return null;
  }
}
