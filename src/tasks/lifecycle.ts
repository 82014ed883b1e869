import type { Config } from '../config/schema.js';
import type { Store } from '../store/db.js';
import { ArchivesRepo } from '../store/repos/archives.js';
import { TaskListRepo } from '../store/repos/task-list.js';
import { registerSecret } from '../http/redact.js';
import { Archiver } from './archive/archiver.js';
import { createStorage, type VideoStorage } from './archive/storage.js';
import { ProviderVideoSource } from './content/provider-source.js';
import { VideoContent } from './content/video-content.js';
import type { TaskServices } from './index.js';
import { TaskLister } from './list.js';
import { taskLogger, type TaskLog } from './log.js';
import { combineHooks, type MoveHooks } from './move-hooks.js';

/** What clients do with tasks besides create and read: list, download, archive (and the workers behind them). */
export interface TaskLifecycle {
  lister: TaskLister;
  content: VideoContent;
  storage: VideoStorage | null;
  archives: ArchivesRepo;
  /** null when storage.type is none. */
  archiver: Archiver | null;
  start(): void;
  stop(): Promise<void>;
}

export interface LifecycleDeps {
  config: Config;
  store: Store;
  tasks: TaskServices;
  log?: TaskLog;
}

/** Builds the lifecycle parts and installs their move hooks on the task transitions. */
export function createTaskLifecycle(d: LifecycleDeps): TaskLifecycle {
  const log = d.log ?? taskLogger(d.config);
  registerSecret(d.config.storage.s3?.secret_access_key);
  const archives = new ArchivesRepo(d.store.db, d.store.dialect);
  const storage = createStorage(d.config.storage);
  const source = new ProviderVideoSource({ config: d.config, refresh: (row) => d.tasks.service.refreshUrl(row) });
  const archiver = storage ? new Archiver({ repo: archives, tasks: d.tasks.repo, storage, source, settings: d.config.storage, log }) : null;
  const hooks: MoveHooks[] = [];
  if (archiver) hooks.push(archiver.hooks());
  d.tasks.transitions.useHooks(combineHooks(hooks));
  return {
    lister: new TaskLister(new TaskListRepo(d.store.db)),
    content: new VideoContent({ tasks: d.tasks.repo, archives, storage, source, log }),
    storage,
    archives,
    archiver,
    start() {
      archiver?.start();
    },
    async stop() {
      await archiver?.stop();
      await source.close();
    },
  };
}
