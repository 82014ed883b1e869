import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

// Channel credentials stored in the database are sealed with AES-256-GCM under a key from the
// environment: MEDIAGATE_SECRET_KEY (base64 of 32 bytes). MEDIAGATE_SECRET_KEY_PREVIOUS, when set,
// still opens what the previous key sealed, so a key can be rotated without downtime
// (docs/channels.md, "Rotating the secret key"). A sealed value is
//   v1.<key id>.<iv>.<tag>.<ciphertext>   (base64url parts; key id: first 8 hex of SHA-256(key))
// and is bound to the channel's name (additional authenticated data): a sealed value copied onto
// another row does not open.

export class SecretKeyError extends Error {}

interface Key {
  id: string;
  bytes: Buffer;
}

function keyOf(name: string, value: string | undefined): Key | null {
  if (value === undefined || value === '') return null;
  const text = value.trim();
  const bytes = Buffer.from(text, 'base64');
  if (!/^[A-Za-z0-9+/]{43}=?$/.test(text) || bytes.length !== 32) {
    throw new SecretKeyError(`${name} must be the base64 of 32 random bytes (e.g. the output of: openssl rand -base64 32); it holds ${bytes.length} bytes`);
  }
  return { id: createHash('sha256').update(bytes).digest('hex').slice(0, 8), bytes };
}

export class SecretBox {
  private constructor(
    private readonly current: Key | null,
    private readonly previous: Key | null,
  ) {}

  /** The keys of the environment; throws SecretKeyError naming a malformed variable. */
  static fromEnv(env: Record<string, string | undefined> = process.env): SecretBox {
    return new SecretBox(keyOf('MEDIAGATE_SECRET_KEY', env.MEDIAGATE_SECRET_KEY), keyOf('MEDIAGATE_SECRET_KEY_PREVIOUS', env.MEDIAGATE_SECRET_KEY_PREVIOUS));
  }

  /** Whether values can be sealed (MEDIAGATE_SECRET_KEY is set). */
  get canSeal(): boolean {
    return this.current !== null;
  }

  seal(plain: string, context: string): string {
    if (!this.current) throw new SecretKeyError('MEDIAGATE_SECRET_KEY is not set: credentials cannot be stored without it (set it on every instance to the base64 of 32 random bytes, e.g. openssl rand -base64 32)');
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.current.bytes, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    const b = (x: Buffer) => x.toString('base64url');
    return `v1.${this.current.id}.${b(iv)}.${b(cipher.getAuthTag())}.${b(body)}`;
  }

  /** Whether a sealed value was sealed with an older key (and should be sealed anew). */
  isStale(sealed: string): boolean {
    return this.current !== null && sealed.split('.')[1] !== this.current.id;
  }

  open(sealed: string, context: string): string {
    const [version, id, iv, tag, body] = sealed.split('.');
    if (version !== 'v1' || body === undefined) throw new SecretKeyError('the stored credentials are not in a known sealed form');
    const key = [this.current, this.previous].find((k) => k?.id === id);
    if (!key) {
      throw new SecretKeyError(
        `the stored credentials were sealed with a key this instance does not have (key id ${id}); set MEDIAGATE_SECRET_KEY (or MEDIAGATE_SECRET_KEY_PREVIOUS while rotating) to that key`,
      );
    }
    try {
      const decipher = createDecipheriv('aes-256-gcm', key.bytes, Buffer.from(iv, 'base64url'));
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretKeyError(`the stored credentials do not open with key ${id} (altered, or sealed for another channel)`);
    }
  }
}
