import type { CompiledQuery, Kysely } from 'kysely';
import type { Database } from '../schema.js';
import type { BatchStatement } from '../checkpointer.js';
import type { RawRead } from '../db.js';
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

/** A stored row as a claim judges it. */
export interface StoredClaim {
  fingerprint: string;
  state: Row['state'];
  leaseUntil: number;
  expiresAt: number;
  answer: KeptAnswer;
}

/** A kept answer to write (with the usage ledger's batch, on SQLite). */
export interface KeptRow {
  keyId: string;
  idemKey: string;
  fingerprint: string;
  owner: string;
  answer: KeptAnswer;
  createdAt: number;
  expiresAt: number;
}

const FIND_COLUMNS = ['fingerprint', 'state', 'lease_until', 'expires_at', 'status', 'headers', 'body'] as const;

export class IdempotencyRepo {
  /** Running claims are rows with a lease their instance renews. */
  readonly leased = true;
  // Every request with a key runs these two (compiled once: no SQL built per request).
  private readonly insertClaim;
  private readonly keepAnswer;
  private keepRow: CompiledQuery | undefined;
  private readonly findRaw: RawRead | null;

  /**
   * `groupCommit`: concurrent claims and kept answers share transactions (SQLite; see GroupCommit).
   * `readRaw`: the store's query-only connection (a SQLite file), for find().
   */
  constructor(
    private readonly db: Kysely<Database>,
    opts: { groupCommit?: boolean; readRaw?: ((sqlText: string) => RawRead) | null } = {},
  ) {
    const find = db.selectFrom('idempotency_keys').select([...FIND_COLUMNS]).where('key_id', '=', '').where('idem_key', '=', '').compile();
    this.findRaw = opts.readRaw ? opts.readRaw(find.sql) : null;
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

  /** The stored row of (key, Idempotency-Key), if any. */
  async find(keyId: string, idemKey: string): Promise<StoredClaim | undefined> {
    let v: unknown[] | undefined;
    if (this.findRaw) v = this.findRaw(keyId, idemKey);
    else {
      const row = await this.db.selectFrom('idempotency_keys').select([...FIND_COLUMNS]).where('key_id', '=', keyId).where('idem_key', '=', idemKey).executeTakeFirst();
      v = row && FIND_COLUMNS.map((c) => row[c]);
    }
    if (!v) return undefined;
    const [fingerprint, state, leaseUntil, expiresAt, status, headers, body] = v as [string, Row['state'], number, number, number, string, Uint8Array | null];
    return {
      fingerprint,
      state,
      leaseUntil: Number(leaseUntil),
      expiresAt: Number(expiresAt),
      answer: { status: Number(status), headers: state === 'done' ? (JSON.parse(headers) as Record<string, string>) : {}, body: Buffer.from(body ?? Buffer.alloc(0)) },
    };
  }

  /** The statement that stores a kept answer, replacing any row of the key (one statement, for a batch). */
  keepStatement(k: KeptRow): BatchStatement {
    if (!this.keepRow) {
      const sample = { key_id: 'p0', idem_key: 'p1', fingerprint: 'p2', owner: 'p3', state: 'done' as const, lease_until: 0, status: 0, headers: 'p7', body: Buffer.alloc(0), created_at: 1, expires_at: 2 };
      this.keepRow = this.db
        .insertInto('idempotency_keys')
        .values(sample)
        .onConflict((oc) =>
          oc.columns(['key_id', 'idem_key']).doUpdateSet((eb) => ({
            fingerprint: eb.ref('excluded.fingerprint'),
            owner: eb.ref('excluded.owner'),
            state: eb.ref('excluded.state'),
            lease_until: eb.ref('excluded.lease_until'),
            status: eb.ref('excluded.status'),
            headers: eb.ref('excluded.headers'),
            body: eb.ref('excluded.body'),
            created_at: eb.ref('excluded.created_at'),
            expires_at: eb.ref('excluded.expires_at'),
          })),
        )
        .compile();
      const expected = Object.values(sample);
      if (this.keepRow.parameters.length !== expected.length || this.keepRow.parameters.some((v, i) => v !== expected[i])) throw new Error('idempotency keep: unexpected parameter order');
    }
    const a = k.answer;
    return { sql: this.keepRow.sql, parameters: [k.keyId, k.idemKey, k.fingerprint, k.owner, 'done', 0, a.status, JSON.stringify(a.headers), a.body, k.createdAt, k.expiresAt] };
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

  /** Keeps the claim's answer for replay (at once, in a transaction of its own). */
  async complete(keyId: string, idemKey: string, owner: string, answer: KeptAnswer, _rowRecorded?: () => boolean): Promise<void> {
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

