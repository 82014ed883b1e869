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
  expires_at: number | null;
  revoked_at: number | null;
  created_at: number;
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
}

export interface TaskTable {
  task_id: string;
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
  /** Estimated video tokens reserved at create. */
  estimated_units: number;
  next_poll_at: number;
  lease_owner: string | null;
  lease_until: number;
  poll_failures: number;
  /** When the gateway gives up on the task (provider expiry + grace), ms. */
  deadline_at: number;
  /** When the stored video URL stops working, ms; 0 = unknown / none. */
  url_expires_at: number;
  updated_at: number;
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
  latency_ms: number;
  created_at: number;
}

export interface ResponseTable {
  id: string;
  key_id: string;
  model: string;
  /** The response object as the client got it, JSON. */
  body: string;
  /** Every input item of the call (earlier turns included, references resolved), JSON array. */
  input_items: string;
  created_at: number;
  expires_at: number;
}

export interface ResponseItemTable {
  id: string;
  key_id: string;
  response_id: string;
  /** The item, JSON. */
  body: string;
  expires_at: number;
}

export interface Database {
  api_keys: ApiKeyTable;
  models: ModelTable;
  reservations: ReservationTable;
  tasks: TaskTable;
  usage: UsageTable;
  responses: ResponseTable;
  response_items: ResponseItemTable;
}
