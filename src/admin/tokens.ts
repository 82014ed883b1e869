import { createHash, randomBytes } from 'node:crypto';
import { generateAdminToken, hashAdminToken, looksLikeAdminToken, adminTokenPrefix } from '../auth/admin-tokens.js';
import { hashesEqual } from '../auth/keys.js';
import type { AdminTokensRepo, AdminTokenRow } from '../store/repos/admin-tokens.js';
import type { AdminSessionsRepo } from '../store/repos/admin-sessions.js';
import { adminErrors, checkedName } from './errors.js';

/** Who is acting in the admin API: an admin token (directly, or through a console session). */
export interface AdminActor {
  tokenId: string;
  name: string;
  /** Set when the request came with a session cookie: the CSRF token it must echo. */
  csrf: string | null;
  sessionHash: string | null;
}

export interface AdminTokenView {
  id: string;
  name: string;
  prefix: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(Number(ms)).toISOString());

export function tokenView(r: AdminTokenRow): AdminTokenView {
  return { id: r.id, name: r.name, prefix: `${r.token_prefix}…`, created_at: iso(r.created_at)!, last_used_at: iso(r.last_used_at), revoked_at: iso(r.revoked_at) };
}

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

/** Admin tokens (`mediagate admin …`) and the console sessions they open. */
export class AdminAccess {
  constructor(
    private readonly tokens: AdminTokensRepo,
    private readonly sessions: AdminSessionsRepo,
  ) {}

  async create(name: string): Promise<{ token: AdminTokenView; secret: string }> {
    const n = name.trim();
    if (!n || n.length > 100) throw adminErrors.invalid('an admin token needs a name of 1 to 100 characters');
    checkedName(n);
    if (await this.tokens.findByName(n)) throw adminErrors.conflict(`an admin token named ${JSON.stringify(n)} exists already; revoke it first or pick another name`);
    const secret = generateAdminToken();
    const row = await this.tokens.create(n, hashAdminToken(secret), adminTokenPrefix(secret));
    return { token: tokenView(row), secret };
  }

  async list(): Promise<AdminTokenView[]> {
    return (await this.tokens.list()).map(tokenView);
  }

  /** Revokes by id, or by name when one live token has it; its console sessions end too. */
  async revoke(idOrName: string): Promise<AdminTokenView> {
    const row = (await this.tokens.findById(idOrName)) ?? (await this.tokens.findByName(idOrName));
    if (!row) throw adminErrors.notFound(`The admin token ${JSON.stringify(idOrName)}`);
    if (!(await this.tokens.revoke(row.id))) throw adminErrors.conflict(`The admin token ${row.id} is already revoked.`);
    return tokenView((await this.tokens.findById(row.id))!);
  }

  async authenticate(presented: string | undefined): Promise<AdminActor | null> {
    if (!presented || !looksLikeAdminToken(presented)) return null;
    const hash = hashAdminToken(presented);
    const row = await this.tokens.findByHash(hash);
    if (!row || row.revoked_at !== null || !hashesEqual(row.token_hash, hash)) return null;
    await this.tokens.touch(row.id);
    return { tokenId: row.id, name: row.name, csrf: null, sessionHash: null };
  }

  /** Opens a console session for a valid token: the cookie value and the CSRF token, each shown once. */
  async login(presented: string, ttlS: number, now = Date.now()): Promise<{ actor: AdminActor; sessionId: string; csrf: string; expiresAt: number } | null> {
    const actor = await this.authenticate(presented);
    if (!actor) return null;
    const sessionId = randomBytes(32).toString('base64url');
    const csrf = randomBytes(24).toString('base64url');
    const expiresAt = now + ttlS * 1000;
    await this.sessions.deleteExpired(now);
    await this.sessions.create({ id_hash: sha256(sessionId), token_id: actor.tokenId, csrf, created_at: now, expires_at: expiresAt });
    return { actor: { ...actor, csrf, sessionHash: sha256(sessionId) }, sessionId, csrf, expiresAt };
  }

  async session(sessionId: string | undefined, now = Date.now()): Promise<(AdminActor & { expiresAt: number }) | null> {
    if (!sessionId || sessionId.length > 100) return null;
    const idHash = sha256(sessionId);
    const row = await this.sessions.findLive(idHash, now);
    if (!row) return null;
    return { tokenId: row.token_id, name: row.token_name, csrf: row.csrf, sessionHash: idHash, expiresAt: Number(row.expires_at) };
  }

  async logout(sessionHash: string): Promise<void> {
    await this.sessions.delete(sessionHash);
  }
}
