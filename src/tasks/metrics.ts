import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/**
 * /metrics series of the video task lifecycle: status moves by provider, poll latency, webhook
 * attempts and the outbox backlog, archive copies and bytes. Counters are per instance (sum them
 * across instances); the pending gauge reads the shared outbox at scrape time.
 */
export class TaskMetrics {
  readonly moves: Counter<'provider' | 'status'>;
  readonly pollSeconds: Histogram<'provider' | 'outcome'>;
  readonly pollLag: Histogram<'provider'>;
  readonly webhookAttempts: Counter<'outcome'>;
  readonly archiveCopies: Counter<'outcome'>;
  readonly archiveBytes: Counter;

  constructor(registry: Registry, pendingWebhooks: () => Promise<number>) {
    const registers = [registry];
    this.moves = new Counter({ name: 'mediagate_video_task_moves_total', help: 'Video task status moves written by this instance, by provider (channel type) and new status', labelNames: ['provider', 'status'], registers });
    this.pollSeconds = new Histogram({
      name: 'mediagate_video_poll_duration_seconds',
      help: 'Time of one provider read call of the poller (one video task, or a batched read of several), by provider and outcome (ok, error)',
      labelNames: ['provider', 'outcome'],
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.pollLag = new Histogram({
      name: 'mediagate_video_poll_lag_seconds',
      help: 'How late a video task poll starts against the time it was due, by provider (channel type)',
      labelNames: ['provider'],
      buckets: [0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300],
      registers,
    });
    this.webhookAttempts = new Counter({ name: 'mediagate_webhook_attempts_total', help: 'Webhook delivery attempts by outcome: ok (2xx), retry (failed, will retry), failed (given up)', labelNames: ['outcome'], registers });
    new Gauge({
      name: 'mediagate_webhook_pending',
      help: 'Webhook deliveries waiting in the outbox (all instances)',
      registers,
      async collect() {
        try {
          this.set(await pendingWebhooks());
        } catch {
          // A database that does not answer leaves the last value; /metrics still answers.
        }
      },
    });
    this.archiveCopies = new Counter({ name: 'mediagate_archive_copies_total', help: 'Video archive copy attempts by outcome: ok, retry, failed', labelNames: ['outcome'], registers });
    this.archiveBytes = new Counter({ name: 'mediagate_archive_bytes_total', help: 'Bytes of video copied into storage by this instance', registers });
  }
}
