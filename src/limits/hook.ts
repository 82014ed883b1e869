import { mayUseModel, type Principal } from '../auth/principal.js';
import { GatewayError } from '../http/errors.js';
import { whenClosed, type Departing } from '../http/departure.js';
import type { KeyAdmission, RateLimits } from './rate-limits.js';
import type { UsageLedger } from './ledger.js';
import { markUsageRecorded } from './usage-backstop.js';
import type { Slot } from './limit-store.js';

export interface LimitContext {
  limits: RateLimits;
  /** Where refusals are recorded (one ledger row per request, refused ones included). */
  ledger: Pick<UsageLedger, 'record'> | null;
}

/** What the limits read of and note on a request. */
export interface LimitSubject {
  principal: Principal | null;
  /** The model whose rpm this request already counted against (counted once per request). */
  rateLimitedModel: string | null;
  usageRecorded: boolean;
}

/**
 * The key's rpm and concurrency of an authenticated request: resolves when admitted (its slot is
 * freed when the response closes, its rate-limit headers set on `reply`), throws the refusal (its
 * ledger row written). `endpoint` is the refusal row's endpoint: the route's billable name, else its
 * pattern.
 */
export async function admitKeyLimits(ctx: LimitContext, request: LimitSubject & Departing, endpoint: string, reply: HeaderSink): Promise<void> {
  const p = request.principal;
  if (!p || (p.concurrency <= 0 && p.rpm <= 0)) return;
  let admission: KeyAdmission;
  try {
    admission = await ctx.limits.admitKey(p);
  } catch (err) {
    recordRefusal(ctx, request, endpoint, '', err);
    throw err;
  }
  // Freed exactly once, when the response has been sent or the client went away, whichever comes first.
  if (admission.slot) releaseOnClose(request, admission.slot);
  for (const k in admission.headers) reply.header(k, admission.headers[k]);
}

/** What admitKeyLimits() writes its rate-limit headers to (the reply). */
export interface HeaderSink {
  header(name: string, value: string): unknown;
}

/**
 * The slot freed when the response closes. A function of its own: the closure kept for as long as
 * the response is open (all of a held stream) holds the slot and nothing of the admission.
 */
function releaseOnClose(request: Departing, slot: Slot): void {
  whenClosed(request, () => slot.release());
}

/** Whether a parsed JSON body names a model whose rpm is limited (then limitModelIn must run). */
export function namesLimitedModel(ctx: LimitContext, body: unknown): body is { model: string } {
  const b = body as { model?: unknown } | null | undefined;
  return !!b && typeof b === 'object' && !Array.isArray(b) && typeof b.model === 'string' && ctx.limits.modelRpm(b.model) > 0;
}

/**
 * Counts the request against `model`'s rpm, once per request; throws 429 when over (and gives the
 * key's rpm back: a refused request counts against no limit). Skipped for a model the key may not
 * use: the route answers 403 and the model's budget stays for allowed callers. `endpoint` is the
 * refusal row's endpoint.
 */
export async function limitModelIn(ctx: LimitContext, request: LimitSubject, endpoint: string, model: string): Promise<void> {
  if (request.rateLimitedModel === model) return;
  if (request.principal && !mayUseModel(request.principal, model)) return;
  try {
    await ctx.limits.admitModel(model);
  } catch (err) {
    if (request.principal) await ctx.limits.refundKey(request.principal);
    recordRefusal(ctx, request, endpoint, model, err);
    throw err;
  }
  request.rateLimitedModel = model;
}

/** A request refused by a limit never reaches its route, so its ledger row is written here. */
function recordRefusal(ctx: LimitContext, request: LimitSubject, endpoint: string, model: string, err: unknown): void {
  const { ledger } = ctx;
  if (!ledger || !request.principal || !(err instanceof GatewayError) || err.status !== 429) return;
  markUsageRecorded(request);
  ledger.record({
    key_id: request.principal.keyId,
    model,
    channel: '',
    endpoint,
    status: 429,
    input_units: 0,
    output_units: 0,
    cost_micros: 0,
    latency_ms: 0,
    error: err.message,
  });
}
