import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ByteRange, ObjectStorage } from './storage.js';

/**
 * Videos as files under one directory. A copy is written to a temporary name and renamed into
 * place, so a reader never sees half a file and a crash mid-copy leaves no object behind.
 */
export class LocalStorage implements ObjectStorage {
  private readonly root: string;

  constructor(dir: string) {
    this.root = resolve(dir);
  }

  private path(key: string): string {
    const p = resolve(this.root, key);
    // Keys are built from task ids ([A-Za-z0-9_.-]); refuse anything that would leave the directory anyway.
    if (!p.startsWith(this.root + sep)) throw new Error('storage key outside the storage directory');
    return p;
  }

  async put(key: string, body: Readable, _contentType: string): Promise<number> {
    const target = this.path(key);
    await mkdir(dirname(target), { recursive: true });
    const temp = join(dirname(target), `.${randomBytes(6).toString('hex')}.part`);
    try {
      await pipeline(body, createWriteStream(temp));
      await rename(temp, target);
    } catch (err) {
      await rm(temp, { force: true });
      throw err;
    }
    return (await stat(target)).size;
  }

  async read(key: string, range?: ByteRange): Promise<Readable> {
    const path = this.path(key);
    await stat(path);
    return createReadStream(path, range ? { start: range.start, end: range.end } : {});
  }

  async remove(key: string): Promise<void> {
    await rm(this.path(key), { force: true });
  }
}
