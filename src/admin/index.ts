import type { Services } from '../services.js';
import { AdminTokensRepo } from '../store/repos/admin-tokens.js';
import { AdminSessionsRepo } from '../store/repos/admin-sessions.js';
import { AuditRepo } from '../store/repos/audit.js';
import { HoldsRepo } from '../store/repos/holds.js';
import { LeasesRepo } from '../store/repos/leases.js';
import { TaskEventsRepo } from '../store/repos/task-events.js';
import { TaskReportsRepo } from '../store/repos/task-reports.js';
import { UsageReportsRepo } from '../store/repos/usage-reports.js';
import { AdminAccess } from './tokens.js';
import { Audit } from './audit.js';
import { KeyAdmin } from './keys.js';
import { UsageAdmin } from './usage.js';
import { TaskAdmin } from './tasks.js';
import { ChannelAdmin } from './channels.js';
import { ChannelEditor } from './channel-editor.js';
import { ChannelsRepo } from '../store/repos/channels.js';
import { RequestLogAdmin } from './request-logs.js';
import { RequestLogsRepo } from '../store/repos/request-logs.js';
import { ProjectsRepo } from '../store/repos/projects.js';
import { ProjectAdmin } from './projects.js';

/** The operator service layer: what the admin API and the CLI call. */
export interface Admin {
  access: AdminAccess;
  audit: Audit;
  keys: KeyAdmin;
  projects: ProjectAdmin;
  usage: UsageAdmin;
  requestLogs: RequestLogAdmin;
  tasks: TaskAdmin;
  channels: ChannelAdmin;
  usageReports: UsageReportsRepo;
  taskReports: TaskReportsRepo;
}

export interface AdminHooks {
  /** Running instances must drop cached keys now (a revoke, new limits). */
  keysChanged?: () => Promise<void> | void;
  /** The other instances must re-read the stored channels now (they do within a second anyway). */
  channelsChanged?: () => Promise<void> | void;
}

/** The parts of the CLI's store the key and usage commands need (no relay, no tasks). */
export type StoreParts = Pick<Services, 'config' | 'store' | 'keys' | 'reservations' | 'usage'>;

export function createKeyAdmin(s: StoreParts, hooks: AdminHooks = {}): KeyAdmin {
  return new KeyAdmin({ config: s.config, keys: s.keys, reservations: s.reservations, holds: new HoldsRepo(s.store.db), leases: new LeasesRepo(s.store.db), usage: new UsageReportsRepo(s.store.db), projects: new ProjectsRepo(s.store.db), changed: hooks.keysChanged });
}

export function createProjectAdmin(s: StoreParts, hooks: AdminHooks = {}): ProjectAdmin {
  return new ProjectAdmin({ config: s.config, projects: new ProjectsRepo(s.store.db), reservations: s.reservations, changed: hooks.keysChanged });
}

/** The editor of stored channels over a running instance's (or the CLI's) config. */
export function createChannelEditor(s: Pick<Services, 'config' | 'store' | 'secretBox'> & { channels?: Pick<Services['channels'], 'fileChannel'> }): ChannelEditor {
  // Without a running instance (the CLI) the loaded config's channels are the file's.
  const fileChannel = s.channels ? (name: string) => s.channels!.fileChannel(name) : (name: string) => s.config.channels.find((c) => c.name === name);
  return new ChannelEditor({ config: s.config, fileChannel, repo: new ChannelsRepo(s.store.db), box: s.secretBox, hasEmbeddedSimulator: s.config.simulator.embedded });
}

export function createAdminAccess(s: Pick<Services, 'store'>): AdminAccess {
  return new AdminAccess(new AdminTokensRepo(s.store.db), new AdminSessionsRepo(s.store.db));
}

export function createAdmin(s: Services, hooks: AdminHooks = {}): Admin {
  const usageReports = new UsageReportsRepo(s.store.db);
  const taskReports = new TaskReportsRepo(s.store.db);
  const usage = new UsageAdmin(usageReports, s.usage);
  const keysChanged = async () => {
    s.authenticator.invalidate();
    await hooks.keysChanged?.();
  };
  return {
    access: createAdminAccess(s),
    audit: new Audit(new AuditRepo(s.store.db)),
    keys: createKeyAdmin(s, { keysChanged }),
    projects: createProjectAdmin(s, { keysChanged }),
    usage,
    requestLogs: new RequestLogAdmin(new RequestLogsRepo(s.store.db), usage),
    tasks: new TaskAdmin({ config: s.config, repo: s.tasks.repo, events: new TaskEventsRepo(s.store.db), reports: taskReports, content: s.lifecycle.content }),
    channels: new ChannelAdmin({ config: s.config, relay: s.relay, stats: s.channelStats, upstream: s.upstream, channels: s.channels, editor: createChannelEditor(s), health: s.health, changed: hooks.channelsChanged }),
    usageReports,
    taskReports,
  };
}
