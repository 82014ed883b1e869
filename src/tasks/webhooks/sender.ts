import { Agent, request, type Dispatcher } from 'undici';
import { randomBase62 } from '../../ids.js';
import type { Config, WebhooksConfig } from '../../config/schema.js';
import { redact } from '../../http/redact.js';
import type { OutboxRow, WebhookOutboxRepo } from '../../store/repos/webhook-outbox.js';
import { BUDGET_EVENT } from '../../store/repos/reservations.js';
import type { TaskCallbacksRepo } from '../../store/repos/task-callbacks.js';
import type { WebhookSecretsRepo } from '../../store/repos/webhook-secrets.js';
import type { TaskRow } from '../../store/repos/tasks.js';
import { guardedAgent } from '../../upstream/address-guard.js';
import { envelope, toTaskRecord } from '../record.js';
import { baseFromConfig, presentRecord } from '../content/gateway-url.js';
import type { TaskLog } from '../log.js';
import type { MoveHooks } from '../move-hooks.js';
import { ClaimWorker } from '../claim-worker.js';
import { signedHeaders } from './signing.js';
import { isLoopbackHost } from './subscription.js';

/** At most this much of a receiver's answer is read (it is only kept for the operator's log). */
const MAX_RESPONSE_BYTES = 4096;

export interface WebhookSenderDeps {
  outbox: WebhookOutboxRepo;
  callbacks: TaskCallbacksRepo;
  secrets: WebhookSecretsRepo;
  config: Pick<Config, 'server' | 'storage'> & { webhooks: WebhooksConfig; limits?: Pick<Config['limits'], 'budget_alerts'> };
  log: TaskLog;
  /** Told of each attempt's outcome (metrics). */
  onAttempt?(outcome: 'ok' | 'retry' | 'failed'): void;
}

/**
 * Completion webhooks. A status move the task subscribed to adds an outbox row in the same
 * transaction as the move (its body frozen then, its id the webhook-id of every attempt). Each
 * instance claims due rows with a lease and POSTs them, signed per Standard Webhooks: a 2xx
 * delivers; anything else waits the next of `retry_delays_s` and tries again, until the list runs
 * out. A process that dies mid-delivery leaves its lease to run out, and the row is sent again:
 * delivery is at least once, and in no particular order.
 */
export class WebhookSender extends ClaimWorker<OutboxRow> {
  readonly owner = `webhooks-${randomBase62(12)}`;
  private readonly guarded: Agent;
  private readonly loopback: Agent;

  constructor(private readonly d: WebhookSenderDeps) {
    super('webhooks', d.config.webhooks, d.log);
    const connectTimeoutMs = Math.min(d.config.webhooks.timeout_ms, 5000);
    this.guarded = guardedAgent({ connectTimeoutMs });
    // Only for loopback receivers with allow_insecure; every other address goes through the guard.
    this.loopback = new Agent({ connect: { timeout: connectTimeoutMs } });
  }

  hooks(): MoveHooks {
    return {
      extrasFor: async (_before, after, now) => {
        const sub = await this.d.callbacks.get(after.task_id);
        if (!sub) return undefined;
        let events: string[];
        try {
          events = JSON.parse(sub.events) as string[];
        } catch {
          events = ['SUCCESS', 'FAILURE'];
        }
        if (!events.includes(after.status)) return undefined;
        return { outbox: [this.message(after, sub.url, now)] };
      },
      moved: () => this.wake(),
    };
  }

  /** The delivery of one status move: the TaskRecord envelope as a read would answer it. */
  private message(task: TaskRow, url: string, now: number): OutboxRow {
    const record = presentRecord(this.d.config, toTaskRecord(task, now), baseFromConfig(this.d.config));
    return {
      id: `msg_${randomBase62(24)}`,
      task_id: task.task_id,
      key_id: task.key_id,
      url,
      event: `task.${task.status.toLowerCase()}`,
      payload: JSON.stringify(envelope(record)),
      state: 'pending',
      attempts: 0,
      next_attempt_at: now,
      lease_owner: null,
      lease_until: 0,
      last_status: 0,
      last_error: '',
      created_at: now,
      delivered_at: 0,
    };
  }

  protected claim(now: number, room: number): Promise<OutboxRow[]> {
    return this.d.outbox.claimDue(this.owner, now, now + this.d.config.webhooks.lease_ms, room);
  }

  protected idOf(row: OutboxRow): string {
    return row.id;
  }

  protected work(row: OutboxRow): Promise<void> {
    return this.deliver(row);
  }

  protected async release(): Promise<void> {
    await this.d.outbox.releaseLeases(this.owner);
    await Promise.all([this.guarded.close(), this.loopback.close()]);
  }

  /** One attempt at one delivery. */
  async deliver(row: OutboxRow): Promise<void> {
    const s = this.d.config.webhooks;
    // Budget alerts go to the operator's receiver, signed with its configured secret; task events with the key's.
    const budgetSecret = this.d.config.limits?.budget_alerts.secret;
    const secrets = row.event === BUDGET_EVENT ? (budgetSecret ? [budgetSecret] : []) : await this.secretsOf(row.key_id);
    if (!secrets.length) return this.failed(row, 0, row.event === BUDGET_EVENT ? 'limits.budget_alerts.secret is not set' : 'the key has no webhook secret', true);
    const headers = { 'content-type': 'application/json', 'user-agent': 'mediagate-webhooks', ...signedHeaders(secrets, row.id, Math.floor(Date.now() / 1000), row.payload) };
    let status = 0;
    try {
      const host = new URL(row.url).hostname;
      const dispatcher = s.allow_insecure && isLoopbackHost(host) ? this.loopback : this.guarded;
      const res = await request(row.url, {
        method: 'POST',
        headers,
        body: row.payload,
        dispatcher,
        // Redirects are not followed: a receiver that moved must be given its new URL.
        signal: AbortSignal.any([this.signal, AbortSignal.timeout(s.timeout_ms)]),
        headersTimeout: s.timeout_ms,
        bodyTimeout: s.timeout_ms,
      });
      status = res.statusCode;
      await readSome(res, MAX_RESPONSE_BYTES);
    } catch (err) {
      if (this.signal.aborted) return; // shutting down: the lease is handed back, the next owner sends it
      return this.failed(row, 0, redact((err as Error).message), false);
    }
    if (status >= 200 && status < 300) {
      await this.d.outbox.markDelivered(row.id, this.owner, status, Date.now());
      this.d.onAttempt?.('ok');
      this.d.log('info', 'webhook delivered', { webhook_id: row.id, task_id: row.task_id, event: row.event, status, attempts: row.attempts + 1 });
      return;
    }
    return this.failed(row, status, `the receiver answered HTTP ${status}`, false);
  }

  private async secretsOf(keyId: string): Promise<string[]> {
    const row = await this.d.secrets.get(keyId);
    if (!row) return [];
    return row.previous_secret && row.previous_until > Date.now() ? [row.secret, row.previous_secret] : [row.secret];
  }

  private async failed(row: OutboxRow, status: number, error: string, final: boolean): Promise<void> {
    const attempts = row.attempts + 1;
    const delays = this.d.config.webhooks.retry_delays_s;
    const next = final || attempts > delays.length ? null : Date.now() + delays[attempts - 1] * 1000;
    await this.d.outbox.markFailed(row.id, this.owner, attempts, next, status, error);
    this.d.onAttempt?.(next === null ? 'failed' : 'retry');
    this.d.log(next === null ? 'error' : 'warn', next === null ? 'webhook given up' : 'webhook attempt failed; will retry', { webhook_id: row.id, task_id: row.task_id, attempts, status, error });
  }
}

/** Reads at most `max` bytes of a body, then drops the rest (a receiver cannot make us read more). */
async function readSome(res: Dispatcher.ResponseData, max: number): Promise<void> {
  let seen = 0;
  res.body.on('error', () => undefined);
  for await (const chunk of res.body) {
    seen += (chunk as Buffer).length;
    if (seen >= max) break;
  }
  res.body.destroy();
}
