import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { SimContext, SimState } from './router.js';
import { sampleVideo } from './mp4.js';

// What the simulator's video parts share: the outcome markers of a prompt, the timeline a task
// follows, OSS-style signed download URLs, serving the sample MP4 with byte ranges, and keeping
// the tasks across restarts.

/**
 * How a task ends, chosen by a marker in its prompt:
 *   [fail]        → the provider's generic generation failure
 *   [moderation]  → refused by the provider's content safety check (output filtered)
 *   [cancel]      → cancelled when it leaves the queue (as if cancelled by the account)
 *   [expire]      → expired at the end of the run (the provider gave up or forgot the task)
 *   [stuck]       → running forever (for gateway timeouts)
 * Each part words the outcome in its own provider's format.
 */
export type SimOutcome = 'succeeded' | 'failed' | 'moderated' | 'cancelled' | 'expired' | 'stuck';

export function outcomeOf(prompt: string): SimOutcome {
  if (prompt.includes('[fail]')) return 'failed';
  if (prompt.includes('[moderation]')) return 'moderated';
  if (prompt.includes('[cancel]')) return 'cancelled';
  if (prompt.includes('[expire]')) return 'expired';
  if (prompt.includes('[stuck]')) return 'stuck';
  return 'succeeded';
}

export type SimPhase = 'queued' | 'running' | 'cancelled' | 'done';

/** The moments a task created at `createdMs` changes phase over a run of `totalMs`: it leaves the queue a fifth of the way in, and finishes. */
export function phaseChangesAt(createdMs: number, totalMs: number): [queueEnd: number, finish: number] {
  return [createdMs + Math.round(totalMs * 0.2), createdMs + totalMs];
}

/**
 * Where a task is at `now` over a run of `totalMs`: queued for the first 20 %, running until the
 * end, then done with its outcome. A task cancelled by a client (`cancelledMs`) or by the
 * [cancel] marker stays `cancelled` from then on; a [stuck] one never finishes.
 */
export function phaseAt(createdMs: number, outcome: SimOutcome, totalMs: number, now: number, cancelledMs: number | null = null): { phase: SimPhase; since: number } {
  const [queueEnd, finish] = phaseChangesAt(createdMs, totalMs);
  if (cancelledMs !== null) return { phase: 'cancelled', since: cancelledMs };
  if (outcome === 'cancelled' && now >= queueEnd) return { phase: 'cancelled', since: queueEnd };
  if (now < queueEnd) return { phase: 'queued', since: createdMs };
  if (now < finish || outcome === 'stuck') return { phase: 'running', since: queueEnd };
  return { phase: 'done', since: finish };
}

/** Progress a provider that reports a percentage would show: 0 queued, growing while running, 100 done. */
export function progressAt(createdMs: number, totalMs: number, now: number): number {
  if (totalMs <= 0) return 100;
  return Math.max(0, Math.min(100, Math.floor(((now - createdMs) / totalMs) * 100)));
}

/** A random id from `alphabet`, `length` characters, not yet in `taken`. */
export function newId(taken: { has(id: string): boolean }, length: number, alphabet = '0123456789', prefix = ''): string {
  for (;;) {
    const id = prefix + Array.from(randomBytes(length), (b, i) => (i === 0 && alphabet === '0123456789' ? '123456789'[b % 9] : alphabet[b % alphabet.length])).join('');
    if (!taken.has(id)) return id;
  }
}

/** A UUID v4, as DashScope's task ids. */
export function uuid(): string {
  const b = randomBytes(16);
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

function ossSignature(secret: Buffer, path: string, expires: string): string {
  return createHmac('sha256', secret).update(`GET\n${path}\n${expires}`).digest('base64');
}

/**
 * An Aliyun OSS-style pre-signed URL (`Expires` = Unix seconds, `OSSAccessKeyId`, `Signature`),
 * as DashScope and MiniMax hand out for generated videos; valid `ttlS` seconds from now.
 */
export function ossSignedUrl(state: SimState, secret: Buffer, path: string, ttlS: number, now = Date.now()): string {
  const expires = String(Math.floor(now / 1000) + ttlS);
  const q = new URLSearchParams({ Expires: expires, OSSAccessKeyId: 'LTAIsimulator', Signature: ossSignature(secret, path, expires) });
  return `${state.baseUrl}${path}?${q.toString()}`;
}

/** Checks an OSS-style signed request; answers OSS's 403 XML itself and returns false when it does not verify. */
export function checkOssSignature(ctx: SimContext, secret: Buffer): boolean {
  const q = ctx.url.searchParams;
  const expires = q.get('Expires') ?? '';
  const given = Buffer.from(q.get('Signature') ?? '', 'utf8');
  const want = Buffer.from(ossSignature(secret, ctx.url.pathname, expires), 'utf8');
  const deny = (code: string, message: string) => {
    const xml = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message><RequestId>sim${Date.now()}</RequestId></Error>`;
    ctx.res.writeHead(403, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(xml) });
    ctx.res.end(xml);
    return false;
  };
  if (given.length !== want.length || !timingSafeEqual(given, want)) return deny('SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided.');
  if (!/^\d+$/.test(expires) || Date.now() / 1000 >= Number(expires)) return deny('AccessDenied', 'Request has expired.');
  return true;
}

/** Answers with the sample MP4: one `bytes=a-b` range as 206, else the whole file; HEAD without a body. */
export function sendSampleVideo(ctx: SimContext): void {
  const video = sampleVideo();
  const headers: Record<string, string | number> = { 'content-type': 'video/mp4', 'accept-ranges': 'bytes' };
  const head = ctx.req.method === 'HEAD';
  const range = /^bytes=(\d*)-(\d*)$/.exec(String(ctx.req.headers.range ?? ''));
  if (range && (range[1] || range[2])) {
    let start = range[1] ? Number(range[1]) : video.length - Number(range[2]);
    let end = range[1] && range[2] ? Number(range[2]) : video.length - 1;
    start = Math.max(0, start);
    end = Math.min(end, video.length - 1);
    if (start > end) {
      ctx.res.writeHead(416, { 'content-range': `bytes */${video.length}` });
      return void ctx.res.end();
    }
    ctx.res.writeHead(206, { ...headers, 'content-range': `bytes ${start}-${end}/${video.length}`, 'content-length': end - start + 1 });
    return void ctx.res.end(head ? undefined : video.subarray(start, end + 1));
  }
  ctx.res.writeHead(200, { ...headers, 'content-length': video.length });
  ctx.res.end(head ? undefined : video);
}

/**
 * Serves the sample MP4 at an OSS-style signed path: 403 when the signature does not verify or
 * has expired, 404 when the id the path's first capture names is not `known`.
 */
export function serveSignedVideo(ctx: SimContext, secret: Buffer, pattern: RegExp, known: (id: string) => boolean): void {
  if (!checkOssSignature(ctx, secret)) return;
  if (!known(pattern.exec(ctx.url.pathname)?.[1] ?? '')) {
    ctx.res.writeHead(404, { 'content-type': 'application/json' });
    return void ctx.res.end(JSON.stringify({ Code: 'NoSuchKey', Message: 'The specified key does not exist.' }));
  }
  sendSampleVideo(ctx);
}

/**
 * The secret the video parts sign with: the simulator's signing secret when it has one (kept
 * across restarts of the embedded simulator), else one made per simulator.
 */
export function videoSecret(state: SimState): Buffer {
  return state.options.signingSecret ?? partState(state, 'video.secret', () => randomBytes(32));
}

/**
 * An id that proves the simulator made it: `base` followed by `macLength` characters of a MAC
 * over it, from `alphabet`. Files named this way stay downloadable after a restart that forgot
 * the task (with the same signing secret), as a provider's storage outlives its API servers.
 */
export function sealId(secret: Buffer, base: string, macLength: number, alphabet: string): string {
  const mac = createHmac('sha256', secret).update(`id:${base}`).digest();
  return base + Array.from(mac.subarray(0, macLength), (b) => alphabet[b % alphabet.length]).join('');
}

/** The base of a sealed id, or undefined when its MAC does not verify. */
export function openId(secret: Buffer, id: string, macLength: number, alphabet: string): string | undefined {
  if (id.length <= macLength) return undefined;
  const base = id.slice(0, -macLength);
  const want = Buffer.from(sealId(secret, base, macLength, alphabet));
  const given = Buffer.from(id);
  return want.length === given.length && timingSafeEqual(want, given) ? base : undefined;
}

/** The state a part keeps under `name` in the simulator, made on first use. */
export function partState<T>(state: SimState, name: string, make: () => T): T {
  let p = state.parts.get(name) as T | undefined;
  if (p === undefined) {
    p = make();
    state.parts.set(name, p);
  }
  return p;
}

/**
 * Calls a task's callback URL back as providers do: at each moment its status may change (`at`,
 * ms), POSTs `bodyAt(now).body` when its status differs from the one last sent. A failed call is
 * not retried (the gateway polls anyway); the timers never keep the process alive. Each call is
 * counted as `<name>` in the simulator's stats.
 */
export function scheduleCallbacks(state: SimState, name: string, url: string, at: number[], bodyAt: (now: number) => { status: string; body: unknown }): void {
  let last = '';
  for (const when of at) {
    // A few ms late: a timer may fire a millisecond early, before the status moved.
    const timer = setTimeout(() => {
      const { status, body } = bodyAt(Date.now());
      if (status === last) return;
      last = status;
      state.counts.set(name, (state.counts.get(name) ?? 0) + 1);
      fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(10_000) })
        .then((res) => res.body?.cancel())
        .catch(() => undefined);
    }, Math.max(0, when - Date.now()) + 5);
    timer.unref();
  }
}

// A provider keeps its tasks when its API servers restart, so the simulator does when it has a
// tasks file (SimOptions.tasksFile: the embedded simulator of a SQLite deployment). Each part's
// tasks are one Map (taskMap); a change to one is written shortly after, the whole file at once
// (a temporary file renamed over it, so a crash leaves the old file or the new one). The file holds
// the newest MAX_SAVED_TASKS tasks of each part, fewer if that is over MAX_SAVED_BYTES.

const MAX_SAVED_TASKS = 1000;
const MAX_SAVED_BYTES = 8 * 1024 * 1024;
const SAVE_DELAY_MS = 50;

type SavedParts = Record<string, [string, unknown][]>;

interface TaskBook {
  file: string | undefined;
  /** Tasks read from the file for parts not opened yet (kept as they are until then). */
  unopened: SavedParts;
  maps: Map<string, Map<string, unknown>>;
  timer: NodeJS.Timeout | null;
}

/** A part's tasks: every set or delete schedules a save. A task changed in place is set again. */
class SavedTasks<T> extends Map<string, T> {
  private changed: (() => void) | null = null;

  static of<T>(entries: [string, T][], changed: () => void): SavedTasks<T> {
    const m = new SavedTasks<T>();
    for (const [id, t] of entries) m.set(id, t);
    m.changed = changed;
    return m;
  }

  override set(id: string, task: T): this {
    super.set(id, task);
    this.changed?.();
    return this;
  }

  override delete(id: string): boolean {
    const had = super.delete(id);
    if (had) this.changed?.();
    return had;
  }
}

function readSaved(file: string | undefined): SavedParts {
  if (!file) return {};
  try {
    const saved = JSON.parse(readFileSync(file, 'utf8')) as { parts?: unknown };
    const parts = saved?.parts;
    if (!parts || typeof parts !== 'object' || Array.isArray(parts)) return {};
    const out: SavedParts = {};
    for (const [name, entries] of Object.entries(parts as Record<string, unknown>)) {
      if (!Array.isArray(entries)) continue;
      out[name] = entries.filter((e): e is [string, unknown] => Array.isArray(e) && typeof e[0] === 'string' && !!e[1] && typeof e[1] === 'object');
    }
    return out;
  } catch {
    // No file yet, or one that does not parse: start without saved tasks.
    return {};
  }
}

function book(state: SimState): TaskBook {
  return partState(state, 'video.tasks', () => ({ file: state.options.tasksFile, unopened: readSaved(state.options.tasksFile), maps: new Map(), timer: null }));
}

/** The tasks of the part `name`, holding those saved before a restart. */
export function taskMap<T>(state: SimState, name: string): Map<string, T> {
  const b = book(state);
  let m = b.maps.get(name);
  if (!m) {
    m = SavedTasks.of((b.unopened[name] ?? []) as [string, T][], () => scheduleSave(b)) as Map<string, unknown>;
    delete b.unopened[name];
    b.maps.set(name, m);
  }
  return m as Map<string, T>;
}

function scheduleSave(b: TaskBook): void {
  if (!b.file || b.timer) return;
  b.timer = setTimeout(() => {
    b.timer = null;
    writeSaved(b);
  }, SAVE_DELAY_MS);
  b.timer.unref();
}

function writeSaved(b: TaskBook): void {
  if (!b.file) return;
  let keep = MAX_SAVED_TASKS;
  let text: string;
  for (;;) {
    const parts: SavedParts = {};
    for (const [name, entries] of Object.entries(b.unopened)) parts[name] = entries.slice(-keep);
    // Maps keep insertion order: the newest tasks are last.
    for (const [name, m] of b.maps) parts[name] = [...m].slice(-keep);
    text = JSON.stringify({ version: 1, parts });
    if (Buffer.byteLength(text) <= MAX_SAVED_BYTES || keep <= 1) break;
    keep = Math.floor(keep / 2);
  }
  try {
    writeFileSync(`${b.file}.tmp`, text, { mode: 0o600 });
    renameSync(`${b.file}.tmp`, b.file);
  } catch (err) {
    process.stderr.write(`mediagate simulator: saving its video tasks to ${b.file} failed: ${(err as Error).message}\n`);
  }
}

/** Writes a pending save now (the simulator is closing). */
export function saveTasksNow(state: SimState): void {
  const b = state.parts.get('video.tasks') as TaskBook | undefined;
  if (!b?.timer) return;
  clearTimeout(b.timer);
  b.timer = null;
  writeSaved(b);
}
