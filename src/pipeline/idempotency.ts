import { createHash, hash, randomUUID, type Hash } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { GatewayError } from '../http/errors.js';
import { clientGone, whenClosed } from '../http/departure.js';
import type { ClaimRequest, ClaimResult, IdempotencyRepo, KeptAnswer } from '../store/repos/idempotency.js';
import type { UsageLedger } from '../limits/ledger.js';
import type { GatewayRequest, Reply, WrittenAnswer } from './request.js';

// Idempotency-Key on the routes that cost money (RouteOptions.idempotent): the first request with a
// key claims it in the store, its answer is kept, and a repeat with the same key and the same request
// gets that answer again instead of a second upstream call, hold and ledger row (docs/limits.md).

export interface IdempotencyOptions {
  /** How long a key and its answer are kept. */
  ttlMs: number;
  /** How long a repeat waits for the first request to finish before 409. */
  waitMs: number;
}

const HEADER = 'idempotency-key';
const MAX_LENGTH = 255;
// Printable US-ASCII: space to tilde.
const PRINTABLE = /^[\x20-\x7e]+$/;
/** A running claim lasts this long unless renewed (its instance renews it while the request runs). */
const LEASE_MS = 30_000;
const RENEW_MS = 10_000;
/** Statuses whose answer is not kept: the same request may well succeed when retried. */
const RETRYABLE = new Set([401, 402, 403, 408, 409, 425, 429]);
/** Response headers not kept for a replay: the connection's own, and the rate limits of the moment. */
const NOT_REPLAYED = /^(?:connection|keep-alive|transfer-encoding|content-length|date|retry-after|x-ratelimit-.*)$/;

/**
 * The request's Idempotency-Key, null when it sends none; 400 when it is not 1–255 printable ASCII
 * characters.
 */
export function idempotencyKeyOf(raw: IncomingMessage): string | null {
  const value = raw.headers[HEADER];
  if (value === undefined) return null;
  // Node joins a repeated header's values with ", ": a comma sends a look at the raw headers.
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_LENGTH || !PRINTABLE.test(value) || (value.includes(',') && repeated(raw.rawHeaders))) {
    throw new GatewayError(400, 'invalid_idempotency_key', `The Idempotency-Key header must be 1 to ${MAX_LENGTH} printable ASCII characters (space to ~), sent once.`, {}, 'Idempotency-Key');
  }
  return value;
}

function repeated(rawHeaders: string[]): boolean {
  let seen = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i].toLowerCase() === HEADER) seen++;
  return seen > 1;
}

/**
 * The request's fingerprint, started with its method, path and query and the media type of its body;
 * the body's bytes are added by fingerprintForm() for a form (fingerprintOf() hashes a whole body).
 */
export function fingerprintStart(request: GatewayRequest): Hash {
  return createHash('sha256').update(fingerprintHead(request));
}

/** The fingerprint of a request whose body is `body` whole: fingerprintStart's digest in one call. */
export function fingerprintOf(request: GatewayRequest, body: Buffer): string {
  const head = fingerprintHead(request);
  return hash('sha256', body.length ? Buffer.concat([Buffer.from(head), body]) : head, 'hex');
}

function fingerprintHead(request: GatewayRequest): string {
  const type = request.headers['content-type'] ?? '';
  const semi = type.indexOf(';');
  return `${request.method} ${request.url}\n${(semi < 0 ? type : type.slice(0, semi)).trim().toLowerCase()}\n`;
}

/**
 * A multipart form's bytes with its boundary left out: a client's retry builds the same form with a
 * new random boundary, and the two are still the same request.
 */
export function fingerprintForm(hash: Hash, headers: IncomingHttpHeaders, body: Buffer): string {
  const boundary = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(headers['content-type'] ?? '');
  const delimiter = boundary ? Buffer.from(`--${boundary[1] ?? boundary[2]}`) : null;
  if (!delimiter) return hash.update(body).digest('hex');
  let from = 0;
  for (let at = body.indexOf(delimiter, from); at >= 0; at = body.indexOf(delimiter, from)) {
    hash.update(body.subarray(from, at)).update('\0--\0');
    from = at + delimiter.length;
  }
  return hash.update(body.subarray(from)).digest('hex');
}

/**
 * Where claims live: rows in the database (IdempotencyRepo: several instances share them) or this
 * process's memory (LocalClaims: one process per database). `rowRecorded` tells whether the
 * request's usage row is in the ledger yet.
 */
export interface ClaimStore {
  claim(c: ClaimRequest): Promise<ClaimResult>;
  /** Running claims are leased and must be renewed while their request runs (false: they live in memory). */
  readonly leased: boolean;
  renew(keyId: string, idemKey: string, owner: string, leaseUntil: number): Promise<void>;
  complete(keyId: string, idemKey: string, owner: string, answer: KeptAnswer, rowRecorded: () => boolean): Promise<void>;
  release(keyId: string, idemKey: string, owner: string): Promise<void>;
}

interface LocalClaim {
  fingerprint: string;
  owner: string;
  createdAt: number;
  expiresAt: number;
  /** Set once the answer is kept; the entry stays until it is in the database. */
  answer: KeptAnswer | null;
}

/**
 * Claims held in this process's memory, for a database one process serves (a SQLite file): a claim
 * is a map entry, and a kept answer is written in the usage ledger's batch with its request's row
 * (the SQLite worker's transaction), so the answer and its ledger row land together. Until then
 * the entry answers repeats; after that the stored row does (read on the query-only connection).
 * A process that stops abruptly loses the claims of requests still running: a retry then runs anew.
 */
export class LocalClaims implements ClaimStore {
  readonly leased = false;
  private readonly claims = new Map<string, LocalClaim>();

  constructor(
    private readonly repo: IdempotencyRepo,
    private readonly ledger: UsageLedger,
  ) {}

  async claim(c: ClaimRequest): Promise<ClaimResult> {
    const name = `${c.keyId}\n${c.idemKey}`;
    let held = this.claims.get(name);
    if (!held) {
      const row = await this.repo.find(c.keyId, c.idemKey);
      // The read may have waited: another request of the key may have claimed it meanwhile.
      held = this.claims.get(name);
      if (!held && row && (row.expiresAt > c.now || row.leaseUntil > c.now)) {
        if (row.fingerprint !== c.fingerprint) return { kind: 'reused' };
        if (row.state === 'done') return { kind: 'done', answer: row.answer };
        // A running claim left by an instance that used durable claims: it holds until its lease ends.
        if (row.leaseUntil > c.now) return { kind: 'running' };
      }
      if (!held) {
        this.claims.set(name, { fingerprint: c.fingerprint, owner: c.owner, createdAt: c.now, expiresAt: c.expiresAt, answer: null });
        return { kind: 'claimed' };
      }
    }
    if (held.fingerprint !== c.fingerprint) return { kind: 'reused' };
    return held.answer ? { kind: 'done', answer: held.answer } : { kind: 'running' };
  }

  /** Nothing to renew: the claim lives as long as this process. */
  async renew(): Promise<void> {}

  async complete(keyId: string, idemKey: string, owner: string, answer: KeptAnswer, rowRecorded: () => boolean): Promise<void> {
    const name = `${keyId}\n${idemKey}`;
    const held = this.claims.get(name);
    if (!held || held.owner !== owner) return;
    held.answer = answer;
    const statement = this.repo.keepStatement({ keyId, idemKey, fingerprint: held.fingerprint, owner, answer, createdAt: held.createdAt, expiresAt: held.expiresAt });
    this.ledger.keep(statement, rowRecorded, () => {
      if (this.claims.get(name) === held) this.claims.delete(name);
    });
  }

  async release(keyId: string, idemKey: string, owner: string): Promise<void> {
    const name = `${keyId}\n${idemKey}`;
    const held = this.claims.get(name);
    if (held && held.owner === owner && !held.answer) this.claims.delete(name);
  }
}

/** The request's claim on its key while it runs. */
interface Claim {
  keyId: string;
  idemKey: string;
  owner: string;
}

export class Idempotency {
  constructor(
    private readonly repo: ClaimStore,
    private readonly options: IdempotencyOptions,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Claims `idemKey` for the request, or answers it: the kept answer of the same earlier request
   * (true: replayed), 422 when the key was used with another request, 409 when the first request
   * still runs after the wait. Once claimed, the answer sent is kept when the response ends, or the
   * claim released when it is not one to keep.
   */
  async admit(request: GatewayRequest, reply: Reply, idemKey: string, fingerprint: string): Promise<boolean> {
    const keyId = request.principal!.keyId;
    const owner = randomUUID();
    const deadline = this.now() + this.options.waitMs;
    for (let pause = 25; ; pause = Math.min(pause * 2, 250)) {
      const now = this.now();
      const result = await this.repo.claim({ keyId, idemKey, fingerprint, owner, now, expiresAt: now + this.options.ttlMs, leaseUntil: now + LEASE_MS });
      switch (result.kind) {
        case 'claimed':
          this.watch(request, reply, { keyId, idemKey, owner });
          return false;
        case 'reused':
          throw new GatewayError(
            422,
            'idempotency_key_reused',
            'This Idempotency-Key was already used with a different request (method, path or body); send a new key for a new request.',
            {},
            'Idempotency-Key',
          );
        case 'done':
          replay(request, reply, result.answer);
          return true;
      }
      if (clientGone(request)) throw new GatewayError(499, 'client_closed', 'The client closed the request.');
      if (this.now() + pause > deadline) {
        throw new GatewayError(
          409,
          'idempotency_in_progress',
          'A request with this Idempotency-Key is still being processed; retry after Retry-After seconds to get its answer.',
          { 'retry-after': '1' },
          'Idempotency-Key',
        );
      }
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }

  /** While the claim's request runs: its lease renewed; when it ends, its answer kept or the claim released. */
  private watch(request: GatewayRequest, reply: Reply, claim: Claim): void {
    const { repo } = this;
    const { keyId, idemKey, owner } = claim;
    const warn = (what: string) => (err: Error) => request.log.warn({ err: err.message }, `idempotency key ${what} failed`);
    const renewal = repo.leased ? setInterval(() => void repo.renew(keyId, idemKey, owner, this.now() + LEASE_MS).catch(warn('renewal')), RENEW_MS) : undefined;
    renewal?.unref();
    let ended = false;
    reply.record((answer) => {
      ended = true;
      clearInterval(renewal);
      if (keepable(answer, reply)) void repo.complete(keyId, idemKey, owner, kept(answer), rowRecordedOf(request)).catch(warn('store'));
      else void repo.release(keyId, idemKey, owner).catch(warn('release'));
    });
    whenClosed(request, () => {
      if (ended) return;
      clearInterval(renewal);
      void repo.release(keyId, idemKey, owner).catch(warn('release'));
    });
  }
}

const RECORDED = (): boolean => true;

/**
 * Whether the request's usage row is in the ledger yet, asked until its kept answer is written. A
 * row already recorded (a whole answer's) needs no look at the request later: the kept answer,
 * waiting for its batch, then holds no reference to the request and all it reaches.
 */
function rowRecordedOf(request: GatewayRequest): () => boolean {
  return request.usageRecorded ? RECORDED : () => request.usageRecorded;
}

/** Answers kept for replay: successes and refusals of the request itself; never a failure a retry may get past. */
function keepable(answer: WrittenAnswer, reply: Reply): boolean {
  return !reply.incomplete && answer.status >= 200 && answer.status < 500 && !RETRYABLE.has(answer.status);
}

function kept(answer: WrittenAnswer): KeptAnswer {
  const headers: Record<string, string> = {};
  for (const k in answer.headers) if (!NOT_REPLAYED.test(k)) headers[k] = answer.headers[k];
  return { status: answer.status, headers, body: answer.body };
}

/** The kept answer sent again, marked as a replay; it costs nothing and writes no ledger row. */
function replay(request: GatewayRequest, reply: Reply, answer: KeptAnswer): void {
  request.usageRecorded = true;
  reply.code(answer.status).headers(answer.headers).header('idempotent-replayed', 'true').send(answer.body);
}
