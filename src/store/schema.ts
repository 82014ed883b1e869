import type { Generated } from 'kysely';

// Row types of every table. Times are integers: `*_at` in Unix milliseconds unless the name says
// seconds (`*_s`). Money is integer micro-dollars. JSON columns are text.

export interface ApiKeyTable {
  id: string;
  name: string;
  key_hash: string;
  /** First characters of the key, for `keys list` (never enough to use it). */
  key_prefix: string;
  /** JSON array of model ids, or null for "every model". */
  models: string | null;
  rpm: number;
  concurrency: number;
  /** Available balance in micro-dollars; null = unlimited. */
  credit_micros: number | null;
  /** What the key owes: real costs above their hold that the balance could not cover. Refused while > 0. */
  overage_micros: Generated<number>;
  expires_at: number | null;
  revoked_at: number | null;
  created_at: number;
  /** The project the key belongs to (projects.id), if any. */
  project_id: Generated<string | null>;
  /** Spend allowed per `budget_period` window (micro-dollars); null = no budget of its own. */
  budget_micros: Generated<number | null>;
  /** day | week | month */
  budget_period: Generated<string | null>;
}

export interface ProjectTable {
  id: string;
  name: string;
  /** Multiplies every price the project's keys pay (holds and settles); null = 1. */
  price_ratio: number | null;
  budget_micros: number | null;
  budget_period: string | null;
  created_at: number;
  updated_at: number;
}

/** Spend of one budget (scope `key:<id>` or `project:<id>`) in one calendar window. */
export interface BudgetWindowTable {
  scope: string;
  window_start: number;
  window_end: number;
  /** The budget when last reserved against (what threshold alerts are measured on). */
  limit_micros: number;
  /** Charged by settled holds. */
  spent_micros: Generated<number>;
  /** Open holds. */
  held_micros: Generated<number>;
  /** Bit i set: the i-th alert threshold has been sent for this window. */
  alerted: Generated<number>;
}

export interface ModelTable {
  id: string;
  first_seen_s: number;
}

export interface ReservationTable {
  id: string;
  key_id: string;
  amount_micros: number;
  /** held | settled | released */
  state: string;
  charged_micros: number;
  created_at: number;
  closed_at: number | null;
  /** JSON list of the budget windows the hold counts against; null for none. */
  budget: Generated<string | null>;
}

export interface TaskTable {
  /** The public id: the provider's id when it is path-safe, else one the gateway minted. */
  task_id: string;
  /** The provider's id of the task (what the adapter reads it back by). */
  upstream_id: string;
  key_id: string;
  model: string;
  channel: string;
  upstream_model: string;
  action: string;
  status: string;
  fail_reason: string;
  submit_time: number;
  start_time: number;
  finish_time: number;
  progress: string;
  /** The provider's latest task object, JSON. */
  data: string;
  reservation_id: string | null;
  /** Estimated billable units reserved at create (in the unit `billing` names). */
  estimated_units: number;
  /** The estimate's unit and resolution, JSON {"unit","resolution"}; '' = video tokens (tasks from before units). */
  billing: string;
  next_poll_at: number;
  lease_owner: string | null;
  lease_until: number;
  poll_failures: number;
  /** When the gateway gives up on the task (provider expiry + grace), ms. */
  deadline_at: number;
  /** When the stored video URL stops working, ms; 0 = unknown / none. */
  url_expires_at: number;
  /** The token of the URL the provider calls back (a hint to poll now); null when it does not call back. */
  callback_token: string | null;
  updated_at: number;
  /** When the owner deleted the task (DELETE /v1/videos/{id}), ms; 0 = not deleted. Deleted tasks are hidden from clients. */
  deleted_at: Generated<number>;
  /** What the Videos API's video object shows: JSON {"prompt","seconds","size"}; '' for tasks from before it. */
  video_meta: Generated<string>;
  /** The W3C traceparent of the task's own trace (its create span), '' when it was created untraced. */
  trace_parent: Generated<string>;
}

export interface UsageTable {
  id: Generated<number>;
  key_id: string;
  model: string;
  channel: string;
  endpoint: string;
  status: number;
  input_units: number;
  output_units: number;
  cost_micros: number;
  /** The part of cost_micros that neither the hold nor the balance covered (owed by the key). */
  overage_micros: Generated<number>;
  latency_ms: number;
  created_at: number;
  /** How the cost was reached: `10 s × $0.05/s (720p) × 1.5 (audio)`; empty for rows that cost nothing. */
  billed_by: Generated<string>;
  /** The message the client was answered with when the request failed or was refused; '' otherwise. */
  error: Generated<string>;
}

/** Part of a key's balance in one instance's keeping (src/store/repos/leases.ts). */
/** Room of a budget window held by one instance (src/limits/budget-lease.ts); part of the window's held_micros. */
export interface BudgetLeaseTable {
  /** `<instance>/<scope>/<window start>` */
  id: string;
  scope: string;
  window_start: number;
  instance: string;
  /** Taken into the window's held_micros and not yet reported spent or given back. */
  amount_micros: number;
  /** Unless renewed by then, the amount returns to the window (after a grace). */
  expires_at: number;
}

export interface CreditLeaseTable {
  /** `<instance>/<key id>` */
  id: string;
  key_id: string;
  instance: string;
  /** Drawn from the balance and not yet reported spent. */
  amount_micros: number;
  /** Unless renewed by then, the amount returns to the balance (after a grace). */
  expires_at: number;
}

export interface AdminTokenTable {
  id: string;
  name: string;
  token_hash: string;
  token_prefix: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

/** A console session: the cookie's value is never stored, only its SHA-256. */
export interface AdminSessionTable {
  id_hash: string;
  token_id: string;
  /** The CSRF token the console must send back in a header on every state-changing request. */
  csrf: string;
  created_at: number;
  expires_at: number;
}

export interface AuditLogTable {
  id: Generated<number>;
  at: number;
  /** `admin:<token id> (<name>)` or `cli` */
  actor: string;
  action: string;
  target: string;
  /** JSON object */
  detail: string;
  ip: string;
}

export interface TaskEventTable {
  id: Generated<number>;
  task_id: string;
  at: number;
  from_status: string;
  to_status: string;
  detail: string;
}

/** A finished task's video copy in storage (docs/video.md, "Archive"). */
export interface TaskArchiveTable {
  task_id: string;
  /** pending (to copy) | stored | failed (gave up) | deleted (retention ran out) */
  state: string;
  attempts: number;
  next_attempt_at: number;
  lease_owner: string | null;
  lease_until: number;
  object_key: string;
  bytes: number;
  content_type: string;
  stored_at: number;
  /** Why the last attempt failed (no secrets: storage and upstream errors pass through redact). */
  error: string;
  created_at: number;
}

/** Where a task's completion webhooks go, and which events it asked for (JSON array). */
export interface TaskCallbackTable {
  task_id: string;
  url: string;
  events: string;
}

/** A key's webhook signing secret (`whsec_` + base64 of 32 random bytes). */
export interface WebhookSecretTable {
  key_id: string;
  secret: string;
  previous_secret: string | null;
  /** Until when (ms) deliveries are signed with the previous secret too. */
  previous_until: number;
  created_at: number;
}

/** One webhook delivery: a message (its id is the webhook-id on every attempt) and its retry state. */
export interface WebhookOutboxTable {
  id: string;
  task_id: string;
  key_id: string;
  url: string;
  event: string;
  /** The exact body sent on every attempt. */
  payload: string;
  /** pending | delivered | failed (gave up) */
  state: string;
  attempts: number;
  next_attempt_at: number;
  lease_owner: string | null;
  lease_until: number;
  last_status: number;
  last_error: string;
  created_at: number;
  delivered_at: number;
}

/**
 * A queued image request whose client stopped waiting (a 504, or it left) while the provider
 * still works: followed by the image-wait worker until its tasks end, then its hold settled and
 * its one usage row written.
 */
export interface ImageWaitTable {
  id: string;
  key_id: string;
  /** The gateway model id (prices) and the channel that took the tasks. */
  model: string;
  channel: string;
  endpoint: string;
  /** The usage row's status (504 or 499), the message its client was told, its input units and when the request arrived. */
  status: number;
  error: string;
  input_units: number;
  started_at: number;
  /** The credit hold (null: a key with unlimited credit). */
  reservation_id: string | null;
  /** JSON: the request's size and quality, what the images are priced by. */
  units: string;
  /** JSON: the open provider tasks and what the finished ones made (PendingTasks). */
  tasks: string;
  /** pending until the tasks end; the row is deleted when settled. */
  state: string;
  next_attempt_at: number;
  lease_owner: string | null;
  lease_until: number;
  /** Past this the tasks are given up on and the hold released. */
  expires_at: number;
  created_at: number;
}

export interface ResponseTable {
  id: string;
  key_id: string;
  model: string;
  /** The response object as the client got it, JSON. */
  body: string;
  /**
   * The input items this response added (item references resolved), JSON array. The turns before
   * it are its parent's; rows stored before responses were chained hold their whole input here.
   */
  input_items: string;
  /** previous_response_id of its request: the conversation continues from there. */
  parent_id: string | null;
  /** Responses before it in its chain (0 for the first turn). */
  depth: number;
  /** UTF-8 bytes of input_items and body: what it adds to its key's total. */
  bytes: number;
  /** UTF-8 bytes of its input and output items as JSON: what it adds to a later turn's input. */
  context_bytes: number;
  created_at: number;
  expires_at: number;
}

export interface ResponseItemTable {
  key_id: string;
  id: string;
  /** The response that stored it last (it lives and goes with that response). */
  response_id: string;
  /** The item, JSON. */
  body: string;
  /** UTF-8 bytes of body. */
  bytes: number;
}

/** Channels added at runtime (kind `stored`), and the enabled switch of config-file channels (kind `override`). */
export interface ChannelTable {
  name: string;
  kind: 'stored' | 'override';
  /** JSON: the channel's fields but its name and credentials ('{}' for an override). */
  body: string;
  /** api_key and api_secret as sealed JSON (src/store/secret-box.ts); null when it has none. */
  credentials: string | null;
  /** 1 or 0. */
  enabled: number;
  created_at: number;
  updated_at: number;
  /** When it was removed, ms; 0 = in force. A removed channel is kept so its tasks can still be read. */
  deleted_at: number;
}

/** One request as operators search it (src/request-logs/): metadata, and the bodies when enabled for its key or model. */
export interface RequestLogTable {
  id: Generated<number>;
  created_at: number;
  trace_id: string;
  key_id: string;
  model: string;
  channel: string;
  endpoint: string;
  /** The route's pattern, e.g. /v1/chat/completions. */
  route: string;
  status: number;
  latency_ms: number;
  input_units: number;
  output_units: number;
  cost_micros: number;
  /** Scrubbed and truncated; '' when bodies are not stored for this key and model. */
  request_body: string;
  response_body: string;
}

export interface IdempotencyKeyTable {
  key_id: string;
  /** The client's Idempotency-Key, as sent. */
  idem_key: string;
  /** SHA-256 (hex) of the request's method, path and body. */
  fingerprint: string;
  /** The claim of the request that runs (or ran) it. */
  owner: string;
  /** `running` while its first request runs, `done` once its answer is kept. */
  state: 'running' | 'done';
  /** A running claim not renewed by then is taken to be lost (its instance stopped) and may be taken over. */
  lease_until: number;
  /** The kept answer (state done): status, headers (JSON object), body bytes. */
  status: number;
  headers: string;
  body: Buffer | null;
  created_at: number;
  expires_at: number;
}

export interface Database {
  request_logs: RequestLogTable;
  channels: ChannelTable;
  credit_leases: CreditLeaseTable;
  budget_leases: BudgetLeaseTable;
  api_keys: ApiKeyTable;
  projects: ProjectTable;
  budget_windows: BudgetWindowTable;
  models: ModelTable;
  reservations: ReservationTable;
  tasks: TaskTable;
  task_archives: TaskArchiveTable;
  webhook_outbox: WebhookOutboxTable;
  task_callbacks: TaskCallbackTable;
  webhook_secrets: WebhookSecretTable;
  usage: UsageTable;
  admin_tokens: AdminTokenTable;
  admin_sessions: AdminSessionTable;
  audit_log: AuditLogTable;
  task_events: TaskEventTable;
  responses: ResponseTable;
  response_items: ResponseItemTable;
  idempotency_keys: IdempotencyKeyTable;
  image_waits: ImageWaitTable;
}
