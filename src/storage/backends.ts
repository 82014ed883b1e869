import type { StorageConfig } from '../config/schema.js';
import { LocalStorage } from './local-storage.js';
import { S3Storage } from './s3-storage.js';
import type { ObjectStorage } from './storage.js';

/** The storage `storage.type` names, or null for `none`. */
export function createStorage(config: StorageConfig): ObjectStorage | null {
  switch (config.type) {
    case 'local':
      return new LocalStorage(config.dir);
    case 's3':
      return new S3Storage(config.s3!);
    default:
      return null;
  }
}
