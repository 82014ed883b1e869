import { randomBytes } from 'node:crypto';
import { readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { Config } from '../config/schema.js';
import { createStorage } from '../storage/backends.js';
import { LocalStorage } from '../storage/local-storage.js';
import type { ObjectStorage } from '../storage/storage.js';

// Images the gateway serves itself (response_format url of a provider that answers with bytes or
// base64): kept in the configured storage (local or S3, under images/), else in a folder of the
// system's temp directory, under an unguessable name that carries its expiry. GET
// /v1/images/files/{name} serves one until then; expired files are swept from local folders.

const NAME = /^(\d{10})-([a-f0-9]{32})\.(png|jpeg|webp)$/;
const EXT: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpeg', 'image/jpg': 'jpeg', 'image/webp': 'webp' };
const SWEEP_EVERY_MS = 10 * 60_000;

export class ImageFiles {
  private lastSweep = 0;

  constructor(
    private readonly storage: ObjectStorage,
    readonly ttlS: number,
    /** The local folder the files are in (swept of expired ones), when they are local. */
    private readonly dir: string | null,
  ) {}

  /** Stores one image; its file name (for the URL), valid for ttlS. */
  async put(bytes: Buffer, mime: string): Promise<{ name: string; expiresAtS: number }> {
    const expiresAtS = Math.floor(Date.now() / 1000) + this.ttlS;
    const name = `${expiresAtS}-${randomBytes(16).toString('hex')}.${EXT[mime] ?? 'png'}`;
    await this.storage.put(`images/${name}`, Readable.from([bytes]), mime);
    void this.sweep();
    return { name, expiresAtS };
  }

  /** The stored image, or null when the name is not one of ours, has expired or is gone. */
  async open(name: string): Promise<{ body: Readable; mime: string } | null> {
    const m = NAME.exec(name);
    if (!m || Number(m[1]) * 1000 < Date.now()) return null;
    try {
      return { body: await this.storage.read(`images/${name}`), mime: `image/${m[3]}` };
    } catch {
      return null;
    }
  }

  private async sweep(): Promise<void> {
    if (!this.dir || Date.now() - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = Date.now();
    const folder = join(this.dir, 'images');
    const now = Date.now() / 1000;
    for (const f of await readdir(folder).catch(() => [] as string[])) {
      const m = NAME.exec(f);
      if (m && Number(m[1]) < now) await rm(join(folder, f), { force: true }).catch(() => undefined);
    }
  }
}

export function imageFilesFor(config: Pick<Config, 'storage' | 'images'>): ImageFiles {
  const ttl = config.images.url_ttl_s;
  const configured = createStorage(config.storage);
  if (configured) return new ImageFiles(configured, ttl, config.storage.type === 'local' ? config.storage.dir : null);
  const dir = join(tmpdir(), `mediagate-images-${process.getuid?.() ?? 'user'}`);
  return new ImageFiles(new LocalStorage(dir), ttl, dir);
}
