import type { Registry } from 'prom-client';
import type { Config } from '../config/schema.js';
import { TaskMetrics } from './metrics.js';
import type { Store } from '../store/db.js';
import { ArchivesRepo } from '../store/repos/archives.js';
import { TaskListRepo } from '../store/repos/task-list.js';
import { registerSecret } from '../http/redact.js';
import { Archiver } from './archive/archiver.js';
import type { ObjectStorage } from '../storage/storage.js';
import { createStorage } from '../storage/backends.js';
import { ProviderVideoSource } from './content/provider-source.js';
import { VideoContent } from './content/video-content.js';
import type { TaskServices } from './index.js';
import type { UpstreamClient } from '../upstream/client.js';
import { TaskLister } from './list.js';
import { VideoLister } from './video-list.js';
import { VideoDeleter } from './video-delete.js';
import { taskLogger, type TaskLog } from './log.js';
import { combineHooks, type MoveHooks } from './move-hooks.js';
import { GatewayError } from '../http/errors.js';
import { TaskCallbacksRepo } from '../store/repos/task-callbacks.js';
import { WebhookOutboxRepo } from '../store/repos/webhook-outbox.js';
import { WebhookSecretsRepo } from '../store/repos/webhook-secrets.js';
import { WebhookSender } from './webhooks/sender.js';
import { checkCallbackAddress, parseSubscription } from './webhooks/subscription.js';
import { endTaskTrace } from '../telemetry/tasks.js';
import { isTerminal } from './status.js';

/** What clients do with tasks besides create and read: list, download, archive (and the workers behind them). */
export interface TaskLifecycle {
  lister: TaskLister;
  /** GET /v1/videos and DELETE /v1/videos/{id} (the Videos API). */
  videos: VideoLister;
  deleter: VideoDeleter;
  content: VideoContent;
  storage: ObjectStorage | null;
  archives: ArchivesRepo;
  /** null when storage.type is none. */
  archiver: Archiver | null;
  webhooks: WebhookSender;
  outbox: WebhookOutboxRepo;
  secrets: WebhookSecretsRepo;
  start(): void;
  stop(): Promise<void>;
}

export interface LifecycleDeps {
  config: Config;
  store: Store;
  tasks: TaskServices;
  /** The client to providers (downloads of content only a channel's key can fetch). */
  upstream: UpstreamClient;
  /** Where the lifecycle's /metrics series go (none: not exported). */
  registry?: Registry;
  log?: TaskLog;
}

/**
 * One structured log line per status move (ids, model, channel, statuses, seconds since submit;
 * never the prompt or a key), and the move counter.
 */
function observeMoves(config: Config, log: TaskLog, metrics: TaskMetrics | null): MoveHooks {
  return {
    extrasFor: async () => undefined,
    moved(before, after, now) {
      const provider = config.channels.find((c) => c.name === after.channel)?.type ?? 'unknown';
      metrics?.moves.inc({ provider, status: after.status });
      if (isTerminal(after.status)) endTaskTrace(after, provider, now);
      log('info', 'video task status', {
        task_id: after.task_id,
        model: after.model,
        channel: after.channel,
        provider,
        from: before.status,
        status: after.status,
        elapsed_s: Math.max(0, Math.round(now / 1000 - after.submit_time)),
        ...(after.status === 'FAILURE' ? { reason: after.fail_reason.split(':')[0] } : {}),
      });
    },
  };
}

/** Builds the lifecycle parts and installs their move hooks on the task transitions. */
export function createTaskLifecycle(d: LifecycleDeps): TaskLifecycle {
  const log = d.log ?? taskLogger(d.config);
  registerSecret(d.config.storage.s3?.secret_access_key);
  const archives = new ArchivesRepo(d.store.db, d.store.dialect);
  const outbox = new WebhookOutboxRepo(d.store.db, d.store.dialect);
  const metrics = d.registry ? new TaskMetrics(d.registry, () => outbox.countPending()) : null;
  if (metrics) {
    d.tasks.poller.usePollObserver((provider, outcome, seconds) => metrics.pollSeconds.observe({ provider, outcome }, seconds));
    d.tasks.poller.usePollLagObserver((provider, seconds) => metrics.pollLag.observe({ provider }, seconds));
  }
  const storage = createStorage(d.config.storage);
  const source = new ProviderVideoSource({ config: d.config, upstream: d.upstream, refresh: (row) => d.tasks.service.refreshUrl(row) });
  const archiver = storage
    ? new Archiver({
        repo: archives,
        tasks: d.tasks.repo,
        storage,
        source,
        settings: d.config.storage,
        log,
        onAttempt(outcome, bytes) {
          metrics?.archiveCopies.inc({ outcome });
          if (bytes) metrics?.archiveBytes.inc(bytes);
        },
      })
    : null;
  const secrets = new WebhookSecretsRepo(d.store.db);
  const webhooks = new WebhookSender({ outbox, callbacks: new TaskCallbacksRepo(d.store.db), secrets, config: d.config, log, onAttempt: (outcome) => metrics?.webhookAttempts.inc({ outcome }) });
  d.tasks.service.useSubscriptions(async (p, body) => {
    const sub = parseSubscription(body, d.config.webhooks);
    if (!sub) return null;
    await checkCallbackAddress(sub, d.config.webhooks);
    if (!(await secrets.get(p.keyId))) {
      throw new GatewayError(400, 'webhook_secret_missing', 'This key has no webhook signing secret yet; the operator makes one with: mediagate keys webhook-secret <key id>.', {}, 'callback_url');
    }
    return sub;
  });
  const hooks: MoveHooks[] = [observeMoves(d.config, log, metrics), webhooks.hooks()];
  if (archiver) hooks.push(archiver.hooks());
  d.tasks.transitions.useHooks(combineHooks(hooks));
  const listRepo = new TaskListRepo(d.store.db);
  return {
    lister: new TaskLister(listRepo),
    videos: new VideoLister(listRepo, d.tasks.repo, d.config.storage.type === 'none' ? 0 : d.config.storage.retain_days),
    deleter: new VideoDeleter({ repo: d.tasks.repo, canceller: d.tasks.canceller, archives, storage, log }),
    content: new VideoContent({ tasks: d.tasks.repo, archives, storage, source, log }),
    storage,
    archives,
    archiver,
    webhooks,
    outbox,
    secrets,
    start() {
      archiver?.start();
      webhooks.start();
    },
    async stop() {
      await webhooks.stop();
      await archiver?.stop();
      await source.close();
    },
  };
}
