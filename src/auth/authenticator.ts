import { hashApiKey, hashesEqual, looksLikeApiKey } from './keys.js';
import type { BudgetRule, Principal } from './principal.js';
import { errors, type GatewayError } from '../http/errors.js';
import { keyModels, type KeyWithProject, type KeysRepo } from '../store/repos/keys.js';

interface CacheEntry {
  row: KeyWithProject;
  principal: Principal;
  until: number;
}

/**
 * Turns a presented key into a Principal. Known keys are cached for `ttlMs` so the hot path does
 * not query the database on every request; a revocation or expiry made elsewhere (the CLI,
 * another instance) therefore takes effect within that time. Unknown keys are never cached.
 *
 * The cache is keyed by the presented key itself (held in memory only, never written anywhere),
 * so a cached key costs one map lookup and no SHA-256; the hash is taken on a miss, for the
 * database lookup.
 */
export class Authenticator {
  private readonly cache = new Map<string, CacheEntry>();
  /**
   * Lookups under way, by presented key: when a cached key expires under load, every request that
   * presents it in the meantime waits for the one database lookup instead of making its own.
   */
  private readonly loading = new Map<string, Promise<CacheEntry | null>>();
  /** Bumped by invalidate(): a lookup that started before it does not fill the cache. */
  private generation = 0;

  constructor(
    private readonly keys: KeysRepo,
    private readonly ttlMs = 2000,
    private readonly maxEntries = 10000,
  ) {}

  /** The key's principal; null for a key that does not pass. A cached key is answered without the database. */
  async authenticate(presented: string | undefined, now = Date.now()): Promise<Principal | null> {
    if (!presented) return null;
    // Only keys of the right shape that the database knew are ever cached.
    const entry = this.cache.get(presented);
    if (entry && entry.until > now) return live(entry, now);
    if (!looksLikeApiKey(presented)) return null;
    let pending = this.loading.get(presented);
    if (!pending) {
      pending = this.load(presented, now);
      this.loading.set(presented, pending);
      const done = () => this.loading.delete(presented);
      pending.then(done, done);
    }
    const found = await pending;
    return found ? live(found, now) : null;
  }

  private async load(presented: string, now: number): Promise<CacheEntry | null> {
    const generation = this.generation;
    const hash = hashApiKey(presented);
    const row = await this.keys.findByHash(hash);
    if (!row || !hashesEqual(row.key_hash, hash)) {
      this.cache.delete(presented);
      return null;
    }
    const entry = { row, principal: toPrincipal(row), until: now + this.ttlMs };
    if (generation === this.generation) {
      if (this.cache.size >= this.maxEntries) this.cache.clear();
      this.cache.set(presented, entry);
    }
    return entry;
  }

  /**
   * The error for a key authenticate() refused: a real key that was revoked or has expired says so
   * (about that key only: its holder learns nothing of any other key); anything else is the plain
   * invalid-key error.
   */
  refusal(presented: string | undefined, now = Date.now()): GatewayError {
    const row = presented ? this.cache.get(presented)?.row : undefined;
    if (row?.revoked_at !== null && row?.revoked_at !== undefined) return errors.invalidApiKey('This API key has been revoked. Ask the operator of this gateway for a new key.');
    if (row && row.expires_at !== null && Number(row.expires_at) <= now) {
      return errors.invalidApiKey(`This API key expired at ${new Date(Number(row.expires_at)).toISOString()}. Ask the operator of this gateway to extend it or for a new key.`);
    }
    return errors.invalidApiKey();
  }

  /** Forget cached keys (after a revoke in this process), and what lookups under way would cache. */
  invalidate(): void {
    this.cache.clear();
    this.loading.clear();
    this.generation++;
  }
}

/** The principal of a cached key that is neither revoked nor expired. */
function live({ row, principal }: CacheEntry, now: number): Principal | null {
  if (row.revoked_at !== null) return null;
  if (row.expires_at !== null && Number(row.expires_at) <= now) return null;
  return principal;
}

export function toPrincipal(row: KeyWithProject): Principal {
  const models = keyModels(row);
  const budgets: BudgetRule[] = [];
  if (row.budget_micros !== null && row.budget_period) {
    budgets.push({ scope: `key:${row.id}`, kind: 'key', name: row.name, limitMicros: Number(row.budget_micros), period: row.budget_period as BudgetRule['period'] });
  }
  const project = row.project_id && row.project_name !== null ? { id: row.project_id, name: row.project_name } : null;
  if (project && row.project_budget_micros !== null && row.project_budget_period) {
    budgets.push({ scope: `project:${project.id}`, kind: 'project', name: project.name, limitMicros: Number(row.project_budget_micros), period: row.project_budget_period as BudgetRule['period'] });
  }
  return {
    keyId: row.id,
    name: row.name,
    models: models ? new Set(models) : null,
    rpm: Number(row.rpm),
    concurrency: Number(row.concurrency),
    limitedCredit: row.credit_micros !== null,
    project,
    priceRatio: project && row.project_price_ratio !== null ? Number(row.project_price_ratio) : 1,
    budgets,
  };
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;
const PLAIN_BEARER = /^Bearer \S+$/;

/** The key from `Authorization: Bearer <key>`, `x-api-key: <key>` or (Gemini clients) `x-goog-api-key: <key>`. */
export function presentedKey(headers: Record<string, string | string[] | undefined>): string | undefined {
  const auth = headers.authorization;
  if (typeof auth === 'string') {
    // The form every SDK sends, tested without a match object (a request's only regex result).
    if (PLAIN_BEARER.test(auth)) return auth.slice(7);
    const m = BEARER.exec(auth);
    if (m) return m[1];
  }
  const x = headers['x-api-key'] ?? headers['x-goog-api-key'];
  return typeof x === 'string' ? x.trim() : undefined;
}
