import type { Config } from '../config/schema.js';
import type { Authenticator } from '../auth/authenticator.js';
import { registerSecret } from '../http/redact.js';
import { ClusterBus } from './bus.js';
import type { RuntimeChannels } from './channels.js';
import type { ChannelHealth } from '../relay/health.js';
import { ConfigReloader, type ReloadLog, type ReloadReport, type ReloadTarget } from './reload.js';

export interface ClusterOptions {
  /** Loads the config anew (the same file, or the embedded default, the instance started from). */
  load: () => Config;
  log: ReloadLog;
}

/** What `serve` needs to take part in a group of instances. */
export interface Cluster {
  /** Reloads this instance's config and, when it applied and Redis is set, tells the others to reload theirs. */
  reloadAndTell(reason: string): Promise<ReloadReport>;
  close(): Promise<void>;
}

/**
 * Wires config reloads and key-change messages. Without `redis.url` a reload (SIGHUP) concerns
 * this instance only; with it, peers reload their own file on a message and drop their key cache
 * when a key changes.
 */
export async function startCluster(services: ReloadTarget & { authenticator: Authenticator; channels: RuntimeChannels; health: ChannelHealth }, opts: ClusterOptions): Promise<Cluster> {
  const reloader = new ConfigReloader(services, opts.load, opts.log);
  const { url, key_prefix } = services.config.redis;
  let bus: ClusterBus | null = null;
  if (url) {
    try {
      registerSecret(decodeURIComponent(new URL(url).password));
    } catch {
      // ioredis reports an unusable URL itself.
    }
    bus = await ClusterBus.connect({ url, key_prefix }, {
        reload: () => void reloader.reload('peer'),
        keys: () => services.authenticator.invalidate(),
        channels: () => void services.channels.refresh().catch((err: Error) => opts.log.warn({ error: err.message }, 're-reading the stored channels failed')),
      }, (message) =>
      opts.log.warn({}, message),
    );
    bus.shareHealth(
      () => services.health.localCounts(),
      (peers) => services.health.setPeers(peers),
    );
  }
  return {
    async reloadAndTell(reason) {
      const report = await reloader.reload(reason);
      if (!report.error && bus) {
        try {
          const n = await bus.publish('reload');
          opts.log.info({ instances: Math.max(0, n - 1) }, 'config reload sent to the other instances');
        } catch (err) {
          opts.log.warn({ error: (err as Error).message }, 'config reload not sent to the other instances (Redis unreachable); reload each one with SIGHUP');
        }
      }
      return report;
    },
    async close() {
      await bus?.close();
    },
  };
}
