import type { Principal } from '../auth/principal.js';
import { mayUseModel } from '../auth/principal.js';
import type { ModelConfig } from '../config/schema.js';
import { GatewayError, errors, statusOf } from '../http/errors.js';
import { toGatewayError } from '../http/error-answer.js';
import { clientStillThere, type DepartureSignal } from '../http/departure.js';
import type { CreditService, Hold, Settled } from '../limits/credit.js';
import type { FitHint } from '../limits/credit-refusal.js';
import type { UsageLedger } from '../limits/ledger.js';
import { UpstreamFailure } from '../upstream/failure.js';
import type { Target } from '../upstream/target.js';
import type { Catalog, CatalogModel } from './catalog.js';
import { failureToGatewayError, type Relay, type RunOptions } from './relay.js';
import { endAttempt, failAttempt, type Attempt } from '../telemetry/genai.js';
import type { TraceParent } from '../telemetry/trace.js';

// The one metered call every billable endpoint makes (chat in all its formats, images, video
// create): model resolved (404 / 403 model_not_allowed / wrong kind) → estimate held → relayed →
// settled with the real cost, or released → exactly one ledger row.

/** Ledger and answer status of a request whose client left first (nginx's "client closed request"). */
export const CLIENT_CLOSED = 499;

/**
 * The model a request names, if this key may use it and it is of the endpoint's kind. `wrongKind`
 * words the 400 for a model of another kind (each endpoint family says where to look instead).
 */
export function resolveModel(catalog: Catalog, p: Principal, id: string, kind: ModelConfig['kind'], wrongKind: (model: CatalogModel) => string): CatalogModel {
  const model = catalog.get(id);
  if (!model) throw errors.modelNotFound(id);
  if (!mayUseModel(p, id)) throw errors.modelNotAllowed(id);
  if (model.config.kind !== kind) throw errors.invalidRequest(wrongKind(model), 'model');
  return model;
}

export interface MeterDeps {
  credit: CreditService;
  ledger: UsageLedger;
  relay: Relay;
}

/** One billable request as the meter sees it. */
export interface MeteredRequest {
  principal: Principal;
  model: CatalogModel;
  /** The ledger's endpoint name. */
  endpoint: string;
  /** When the request arrived (Date.now()): the row's latency runs from here. */
  started: number;
  /** Claims the request's one usage row; false when a row was already written (by the usage backstop). */
  claimRow: () => boolean;
  /** Aborted when the client leaves: no upstream call is made for nobody. */
  departed: DepartureSignal;
  /** Whether the client has already left, asked before the hold (default: `departed.aborted`). */
  gone?: () => boolean;
  /** The message of the 499 a client that left is thrown. */
  goneMessage: string;
  /** Units known before the call (the images an edit uploads): every row of the request records them. */
  inputUnits?: number;
  /** The estimate to hold: the most the request may cost. */
  holdMicros: number;
  /** How a request refused for credit could fit the balance (the refusal's hint). */
  fit?: FitHint;
  /** The hold outlives the request (a video task's, closed by the poller): a reservation row, not the lease. */
  durable?: boolean;
  /** Tracing: the request's server span, parent of its credit and attempt spans. */
  trace?: TraceParent | null;
}

/** What the request came to, once the relayed answer was used (sent, stored). */
export interface Outcome<R> {
  /** What meteredCall returns. */
  value: R;
  /** The row's status. */
  status: number;
  input?: number;
  output?: number;
  /** The real cost to settle the hold with; absent: the hold stays open (a video task's) and the row records no cost. */
  costMicros?: number;
  /** How the cost was reached (the price rule applied), kept on the usage row. */
  billedBy?: string;
  /** The answer is already out: a failing settle is handed here (to be logged) instead of failing the request. */
  settleFailed?: (err: Error) => void;
  /**
   * The hold and the row are handed to another owner (a queued image request whose client stopped
   * waiting, settled when its provider tasks end): neither settled nor written here, but the row is
   * claimed so no one else writes it. `costMicros` is ignored.
   */
  handedOff?: boolean;
  /** Tracing: the model the provider says answered, its finish reasons, the task it created. */
  responseModel?: string;
  finishReasons?: string[];
  taskId?: string;
}

/**
 * Runs one metered call: holds `holdMicros`, relays `attempt` over the model's channels, lets `use`
 * turn the answer into an outcome (told the channel that answered and the hold), settles the hold
 * with its cost, and writes the one ledger row. Anything that fails after the hold releases it and records the failure's status. A client that
 * left before the upstream call (or during it) is a 499 GatewayError with `goneMessage`.
 */
export async function meteredCall<A, R>(
  d: MeterDeps,
  m: MeteredRequest,
  attempt: (target: Target) => Promise<A>,
  use: (answer: A, call: { channel: string; hold: Hold }) => Promise<Outcome<R>>,
  runOptions?: RunOptions,
): Promise<R> {
  let channel = '';
  const inputUnits = m.inputUnits ?? 0;
  const write = (status: number, input: number, output: number, cost: number, overage = 0, note: RowNote = {}) =>
    d.ledger.record({
      key_id: m.principal.keyId,
      model: m.model.id,
      channel,
      endpoint: m.endpoint,
      status,
      input_units: input,
      output_units: output,
      cost_micros: cost,
      overage_micros: overage,
      latency_ms: Date.now() - m.started,
      billed_by: note.billedBy ?? '',
      error: note.error ?? '',
    });
  const record = (status: number, input: number, output: number, cost: number, overage = 0, note: RowNote = {}) => {
    if (m.claimRow()) write(status, input, output, cost, overage, note);
  };
  const gone = () => new GatewayError(CLIENT_CLOSED, 'client_closed_request', m.goneMessage);
  if (m.gone ? m.gone() : m.departed.aborted) {
    const err = gone();
    record(CLIENT_CLOSED, inputUnits, 0, 0, 0, { error: err.message });
    throw err;
  }
  const hold = m.durable ? await d.credit.reserveDurable(m.principal, m.holdMicros, m.fit, m.trace) : await d.credit.reserve(m.principal, m.holdMicros, m.fit, m.trace);

  let outcome: Outcome<R>;
  let settled: Settled | null = null;
  // Tracing: the answering attempt's span stays open while its answer is used (a stream: to its end).
  let answering: Attempt | null = null;
  try {
    // A client that left while its credit was held gets no upstream call.
    if (!(await clientStillThere(m.departed))) throw gone();
    const answer = await d.relay.run(
      m.model,
      (target) => {
        channel = target.channel.name;
        return attempt(target);
      },
      { ...runOptions, keyId: m.principal.keyId, trace: m.trace, keepAttempt: (a) => (answering = a) },
    );
    try {
      outcome = await use(answer, { channel, hold });
    } catch (err) {
      if (answering) failAttempt(answering, err);
      answering = null;
      throw err;
    }
    if (answering) {
      const o = outcome;
      endAttempt(answering, m.model.config.kind, { status: o.status, input: o.input, output: o.output, costMicros: o.handedOff ? undefined : o.costMicros, responseModel: o.responseModel, finishReasons: o.finishReasons, taskId: o.taskId });
    }
    if (outcome.handedOff) {
      m.claimRow();
      return outcome.value;
    }
    if (outcome.costMicros !== undefined && !outcome.settleFailed) {
      settled = await d.credit.settle(hold, outcome.costMicros);
    }
  } catch (err) {
    await releaseQuietly(d.credit, hold);
    const failure = err instanceof UpstreamFailure ? (err.kind === 'aborted' ? gone() : failureToGatewayError(err)) : err;
    record(statusOf(failure), inputUnits, 0, 0, 0, { error: toGatewayError(failure).message });
    throw failure;
  }
  const cost = outcome.costMicros;
  const late = outcome.settleFailed;
  if (cost !== undefined && late) {
    settled = await d.credit.settle(hold, cost).catch((err: Error) => {
      late(err);
      return null;
    });
  }
  record(outcome.status, outcome.input ?? inputUnits, outcome.output ?? 0, settled?.chargedMicros ?? cost ?? 0, settled?.overageMicros ?? 0, { billedBy: cost !== undefined ? outcome.billedBy : undefined });
  return outcome.value;
}

/** What a ledger row says beside its numbers: how its cost was reached, or what its client was told. */
interface RowNote {
  billedBy?: string;
  error?: string;
}

async function releaseQuietly(credit: CreditService, hold: Hold): Promise<void> {
  try {
    await credit.release(hold);
  } catch (err) {
    process.stderr.write(`mediagate: releasing a credit hold failed: ${(err as Error).message}\n`);
  }
}
