import type { Config } from '../config/schema.js';
import type { CreditService } from '../limits/credit.js';
import type { UsageLedger } from '../limits/ledger.js';
import type { Catalog } from '../relay/catalog.js';
import type { Relay } from '../relay/relay.js';
import type { UpstreamClient } from '../upstream/client.js';
import type { Store } from '../store/db.js';
import { TasksRepo } from '../store/repos/tasks.js';
import { taskLogger, type TaskLog } from './log.js';
import { Poller } from './poller.js';
import { ProviderCallbacks } from './provider-callbacks.js';
import { TaskService } from './service.js';
import { TaskTransitions } from './transitions.js';
import { TaskCanceller } from './cancel.js';

export interface TaskServices {
  repo: TasksRepo;
  transitions: TaskTransitions;
  service: TaskService;
  /** Cancels open tasks at their provider (POST …/cancel, DELETE /v1/videos/{id}). */
  canceller: TaskCanceller;
  poller: Poller;
  /** Provider callbacks: hints to poll a task now. */
  callbacks: ProviderCallbacks;
}

export interface TaskServicesDeps {
  config: Config;
  store: Store;
  catalog: Catalog;
  relay: Relay;
  upstream: UpstreamClient;
  credit: CreditService;
  ledger: UsageLedger;
  log?: TaskLog;
}

/** Wires the video task parts together; the caller starts and stops the poller. */
export function createTaskServices(d: TaskServicesDeps): TaskServices {
  const log = d.log ?? taskLogger(d.config);
  const repo = new TasksRepo(d.store.db, d.store.dialect, d.store.readRaw);
  const transitions = new TaskTransitions({ repo, credit: d.credit, ledger: d.ledger, config: d.config, settings: d.config.tasks, log });
  const service = new TaskService({ config: d.config, repo, catalog: d.catalog, relay: d.relay, upstream: d.upstream, credit: d.credit, ledger: d.ledger, transitions, log });
  const poller = new Poller({ repo, transitions, upstream: d.upstream, config: d.config, log });
  const canceller = new TaskCanceller({ config: d.config, repo, transitions, upstream: d.upstream });
  const callbacks = new ProviderCallbacks({ repo, pollSoon: () => poller.wake() });
  return { repo, transitions, service, canceller, poller, callbacks };
}
