import { randomUUID } from 'node:crypto';
import type { Principal } from '../auth/principal.js';
import type { Config } from '../config/schema.js';
import { randomBase62 } from '../ids.js';
import type { CreditService, Hold } from '../limits/credit.js';
import type { UsageLedger } from '../limits/ledger.js';
import { imageQuote } from '../limits/pricing.js';
import type { PendingImages, PendingTasks } from '../providers/image-types.js';
import { imagesAdapterFor } from '../providers/index.js';
import type { Catalog } from '../relay/catalog.js';
import { spentUnits, type PricedBy } from '../relay/image-cost.js';
import type { ImageWaitRow, ImageWaitsRepo } from '../store/repos/image-waits.js';
import type { UpstreamClient } from '../upstream/client.js';
import { targetFor } from '../upstream/target.js';
import { ClaimWorker } from './claim-worker.js';
import type { TaskLog } from './log.js';

// A queued image request whose client stopped waiting (a 504 past the model's wait, or the client
// left) keeps its credit hold while the provider works. The request is recorded in the store with
// its provider tasks, and this worker (on every instance, each row claimed by one) reads the tasks
// every `tasks.poll_interval_ms` until they end, then settles the hold by what they made and
// writes the request's one usage row — also after a restart, or on another instance.

export interface ImageWaitDeps {
  config: Config;
  repo: ImageWaitsRepo;
  catalog: Catalog;
  upstream: UpstreamClient;
  credit: CreditService;
  ledger: UsageLedger;
  log: TaskLog;
}

/** The request as it is handed over: who pays, for which model, on which channel, and its open tasks. */
export interface ImageWait {
  principal: Principal;
  model: string;
  channel: string;
  endpoint: string;
  /** The usage row's status (504, or 499 for a client that left) and the message the client was answered with. */
  status: number;
  error: string;
  inputUnits: number;
  started: number;
  hold: Hold;
  pricedBy: PricedBy;
  pending: PendingImages;
}

export class ImageWaits extends ClaimWorker<ImageWaitRow> {
  readonly owner = `image-waits-${randomBase62(12)}`;

  constructor(private readonly d: ImageWaitDeps) {
    const tasks = () => d.config.tasks;
    super('image-wait worker', { get tick_ms() { return tasks().tick_ms; }, get concurrency() { return tasks().batch; } }, d.log);
  }

  /** Keeps the request's hold and tasks in the store for this worker (on any instance) to settle. */
  async record(w: ImageWait): Promise<void> {
    let reservationId = w.hold.reservationId;
    if (w.hold.lease) {
      // A hold in this instance's lease would not survive it: moved to a reservation row.
      await this.d.credit.release(w.hold);
      const durable = await this.d.credit.reserveDurable(w.principal, w.hold.amountMicros).catch(() => null);
      if (!durable) this.log('warn', 'image wait: the hold could not be kept in the store; the images it makes are recorded but not charged', { model: w.model });
      reservationId = durable?.reservationId ?? null;
    }
    const now = Date.now();
    await this.d.repo.insert({
      id: randomUUID(),
      key_id: w.principal.keyId,
      model: w.model,
      channel: w.channel,
      endpoint: w.endpoint,
      status: w.status,
      error: w.error,
      input_units: w.inputUnits,
      started_at: w.started,
      reservation_id: reservationId,
      units: JSON.stringify({ size: w.pricedBy.size, quality: w.pricedBy.quality, n: w.pricedBy.n }),
      tasks: JSON.stringify(w.pending.state),
      state: 'pending',
      next_attempt_at: now,
      lease_owner: null,
      lease_until: 0,
      expires_at: now + w.pending.lifetimeS * 1000,
      created_at: now,
    });
    this.wake();
  }

  protected claim(now: number, room: number): Promise<ImageWaitRow[]> {
    return this.d.repo.claimDue(this.owner, now, now + this.d.config.tasks.lease_ms, room);
  }

  protected idOf(row: ImageWaitRow): string {
    return row.id;
  }

  protected release(): Promise<void> {
    return this.d.repo.releaseLeases(this.owner);
  }

  protected async work(row: ImageWaitRow): Promise<void> {
    let state = JSON.parse(row.tasks) as PendingTasks;
    const channel = this.d.config.channels.find((c) => c.name === row.channel);
    const found = channel ? imagesAdapterFor(targetFor(channel, row.model)) : undefined;
    if (found?.adapter.check && state.tasks.length) state = await found.adapter.check({ upstream: this.d.upstream, signal: this.signal }, found.target, state);
    const followable = !!found?.adapter.check;
    if (state.tasks.length && followable && Date.now() < row.expires_at && !this.signal.aborted) {
      await this.d.repo.reschedule(row.id, this.owner, JSON.stringify(state), Date.now() + this.d.config.tasks.poll_interval_ms);
      return;
    }
    // Stopping mid-read: the row stays for the next owner.
    if (this.signal.aborted) return this.d.repo.reschedule(row.id, this.owner, JSON.stringify(state), Date.now());
    if (state.tasks.length) {
      this.log('warn', followable ? 'image wait: tasks still open past their lifetime; charged only what finished' : 'image wait: its channel no longer serves images; charged only what finished', { model: row.model, channel: row.channel, tasks: state.tasks.map((t) => t.id).join(', ') });
    }
    if (!(await this.d.repo.take(row.id, this.owner))) return;
    await this.settle(row, state);
  }

  /** Closes the hold by what the tasks made (released when nothing) and writes the request's one usage row. */
  private async settle(row: ImageWaitRow, state: PendingTasks): Promise<void> {
    const model = this.d.catalog.get(row.model);
    const billed = Object.keys(state.billed).length ? state.billed : undefined;
    // A model taken out of the config since: the images are charged at the hold, as an unknown cost is.
    const q = state.images || billed ? (model ? imageQuote(model.config, spentUnits(JSON.parse(row.units) as PricedBy, state.images, billed)) : { micros: NaN, billedBy: '' }) : { micros: 0, billedBy: '' };
    // The key tells the price ratio at settle, as for a video task's stored hold.
    const hold = { reservationId: row.reservation_id, keyId: row.key_id };
    let charged = 0;
    let overage = 0;
    if (q.micros > 0 || Number.isNaN(q.micros)) {
      const s = await this.d.credit.settle(hold, q.micros);
      charged = s?.chargedMicros ?? 0;
      overage = s?.overageMicros ?? 0;
    } else await this.d.credit.release(hold);
    this.d.ledger.record({
      key_id: row.key_id,
      model: row.model,
      channel: row.channel,
      endpoint: row.endpoint,
      status: row.status,
      input_units: row.input_units,
      output_units: state.images,
      cost_micros: charged,
      overage_micros: overage,
      latency_ms: Date.now() - row.started_at,
      billed_by: q.billedBy,
      error: row.error,
    });
  }
}
