import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { GroupCommit } from '../group-commit.js';
import { prepared } from '../prepared.js';

// Idempotency-Key claims and kept answers, one row per (API key, Idempotency-Key). The row's
// primary key makes the claim atomic on SQLite and PostgreSQL alike: of two requests inserting it at
// once, on one instance or two, exactly one inserts; the other reads the row and waits or replays.

/** An answer kept for replay. */
export interface KeptAnswer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** What a claim found. */
export type ClaimResult =
  | { kind: 'claimed' }
  /** The key was used with another request (method, path or body). */
  | { kind: 'reused' }
  /** The first request with this key still runs. */
  | { kind: 'running' }
  | { kind: 'done'; answer: KeptAnswer };

export interface ClaimRequest {
  keyId: string;
  idemKey: string;
  fingerprint: string;
  /** This claim's owner id (unique per request). */
  owner: string;
  now: number;
  /** When a kept answer (or an unfinished claim) is forgotten. */
  expiresAt: number;
  /** Until when the claim holds without renewal. */
  leaseUntil: number;
}

type Row = Database['idempotency_keys'];

export class IdempotencyRepo {
  // Every request with a key runs these two (compiled once: no SQL built per request).
  private readonly insertClaim;
  private readonly keepAnswer;

  /** `groupCommit`: concurrent claims and kept answers share transactions (SQLite; see GroupCommit). */
  constructor(
    private readonly db: Kysely<Database>,
    opts: { groupCommit?: boolean } = {},
  ) {
    const group = opts.groupCommit ? new GroupCommit(db) : null;
    this.insertClaim = prepared(
      db,
      (key_id: string, idem_key: string, fingerprint: string, owner: string, state: Row['state'], lease_until: number, status: number, headers: string, body: Buffer | null, created_at: number, expires_at: number) =>
        db
          .insertInto('idempotency_keys')
          .values({ key_id, idem_key, fingerprint, owner, state, lease_until, status, headers, body, created_at, expires_at })
          .onConflict((oc) => oc.columns(['key_id', 'idem_key']).doNothing())
          .returning('owner'),
      ['', '', '', '', 'running', 0, 0, '', null, 0, 0],
      group,
    );
    this.keepAnswer = prepared(
      db,
      (state: Row['state'], lease_until: number, status: number, headers: string, body: Buffer, keyId: string, idemKey: string, owner: string) =>
        db.updateTable('idempotency_keys').set({ state, lease_until, status, headers, body }).where('key_id', '=', keyId).where('idem_key', '=', idemKey).where('owner', '=', owner),
      ['done', 0, 0, '', Buffer.alloc(0), '', '', ''],
      group,
    );
  }

  /** Claims the key for this request, or says why not. */
  async claim(c: ClaimRequest): Promise<ClaimResult> {
    // A row that goes away between the insert and the read (released, expired) is claimed again.
    for (let attempt = 0; attempt < 3; attempt++) {
      const inserted = await this.insertClaim(c.keyId, c.idemKey, c.fingerprint, c.owner, 'running', c.leaseUntil, 0, '', null, c.now, c.expiresAt);
      if (inserted.length) return { kind: 'claimed' };
      const row = await this.db
        .selectFrom('idempotency_keys')
        .selectAll()
        .where('key_id', '=', c.keyId)
        .where('idem_key', '=', c.idemKey)
        .executeTakeFirst();
      if (!row) continue;
      // Expired: a kept answer, or a claim whose request no longer runs (one still running keeps its key).
      if (row.expires_at <= c.now && row.lease_until <= c.now) {
        await this.db.deleteFrom('idempotency_keys').where('key_id', '=', c.keyId).where('idem_key', '=', c.idemKey).where('owner', '=', row.owner).execute();
        continue;
      }
      if (row.fingerprint !== c.fingerprint) return { kind: 'reused' };
      if (row.state === 'done') {
        return { kind: 'done', answer: { status: row.status, headers: JSON.parse(row.headers) as Record<string, string>, body: Buffer.from(row.body ?? Buffer.alloc(0)) } };
      }
      if (row.lease_until > c.now) return { kind: 'running' };
      // Its request's instance stopped renewing it (it stopped, or lost its database): taken over.
      const taken = await this.db
        .updateTable('idempotency_keys')
        .set({ owner: c.owner, lease_until: c.leaseUntil })
        .where('key_id', '=', c.keyId)
        .where('idem_key', '=', c.idemKey)
        .where('owner', '=', row.owner)
        .where('state', '=', 'running')
        .executeTakeFirst();
      if (Number(taken.numUpdatedRows) === 1) return { kind: 'claimed' };
    }
    return { kind: 'running' };
  }

  /** Extends a running claim's lease. */
  async renew(keyId: string, idemKey: string, owner: string, leaseUntil: number): Promise<void> {
    await this.db
      .updateTable('idempotency_keys')
      .set({ lease_until: leaseUntil })
      .where('key_id', '=', keyId)
      .where('idem_key', '=', idemKey)
      .where('owner', '=', owner)
      .where('state', '=', 'running')
      .execute();
  }

  /** Keeps the claim's answer for replay. */
  async complete(keyId: string, idemKey: string, owner: string, answer: KeptAnswer): Promise<void> {
    await this.keepAnswer('done', 0, answer.status, JSON.stringify(answer.headers), answer.body, keyId, idemKey, owner);
  }

  /** Gives a running claim up: the next request with the key runs anew. */
  async release(keyId: string, idemKey: string, owner: string): Promise<void> {
    await this.db.deleteFrom('idempotency_keys').where('key_id', '=', keyId).where('idem_key', '=', idemKey).where('owner', '=', owner).where('state', '=', 'running').execute();
  }

  /** Removes expired rows, but not the claim of a request still running (called by a periodic sweep). */
  async sweep(now = Date.now()): Promise<number> {
    const res = await this.db.deleteFrom('idempotency_keys').where('expires_at', '<=', now).where('lease_until', '<=', now).executeTakeFirst();
    return Number(res.numDeletedRows);
  }
}

