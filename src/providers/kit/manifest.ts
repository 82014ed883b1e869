import type { ModelConfig, VideoModeName } from '../../config/schema.js';

// The provider manifest as the kit reads it: the TypeScript face of manifest.schema.json (the
// schema is what a manifest file is checked against; these types are what the engine reads after
// that check). docs/providers.md describes every field.

/** A JSON value in a manifest template: strings may hold `{placeholders}`. */
export type Template = unknown;

/** A test on one value (a neutral request field, or a path in the provider's answer). */
export interface Test {
  /** The value is given (true) or absent (false). */
  present?: boolean;
  in?: (string | number | boolean)[];
  not_in?: (string | number | boolean)[];
  /** A number at least this, or a list with at least this many items. */
  min?: number;
  max?: number;
}

/** All fields must pass their tests; `any` holds when one of its conditions holds. */
export type Condition = { [field: string]: Test | Condition[] | undefined } & { any?: Condition[] };

export interface AuthSpec {
  scheme: 'bearer' | 'header' | 'query' | 'jwt-hs256' | 'hmac-v4' | 'google-service-account';
  /** header: the header's name; query: the parameter's name. */
  name?: string;
  /** header: the value with `{key}` for the API key (default `{key}`). */
  value?: string;
  /** jwt-hs256: token lifetime and clock allowance, seconds. */
  lifetime_s?: number;
  skew_s?: number;
  /** hmac-v4: the signing vendor (algorithm names and header prefix), region and service. */
  vendor?: 'aws' | 'volc';
  region?: string;
  service?: string;
  /** google-service-account: the OAuth scope. */
  scope?: string;
}

export interface ErrorSpec {
  message?: string;
  code?: string;
}

export interface EnvelopeSpec {
  code: string;
  ok: (string | number)[];
  message?: string;
  /** The HTTP status such a failure counts as (retries and breakers read it). */
  status?: number;
  status_by_code?: Record<string, number>;
  /** A missing code is success (else a failure). */
  missing_ok?: boolean;
  /** Skip the check when this path holds a non-empty string (a task read that carries its task's failure). */
  unless?: string;
}

export interface ApiSpec {
  base_path?: string;
  auth: AuthSpec;
  headers?: Record<string, string>;
  errors?: ErrorSpec;
  envelope?: EnvelopeSpec;
  /** Every JSON answer is read inside this field (`data`). */
  unwrap?: string;
}

export interface EndpointSpec {
  method?: 'GET' | 'POST' | 'DELETE' | 'PUT' | 'PATCH';
  path: string;
  headers?: Record<string, string>;
  body?: Template;
}

export interface CreateVariant extends EndpointSpec {
  name?: string;
  when?: Condition;
}

export interface TaskIdSpec {
  path: string;
  pattern?: string;
  /** The id kept by the gateway, from `{value}` (the provider's id), `{variant}` and `{model}`. */
  store?: string;
  /** What a kept id must look like before it goes into a read path. */
  stored_pattern?: string;
}

export interface ListSpec {
  path: string;
  query?: Record<string, string>;
  ids_param: string;
  items: string;
  id: string;
  max_ids: number;
}

export interface StateEntry {
  state: 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled' | 'expired';
  code?: string;
  message?: string;
}

export interface StatusSpec {
  path?: string;
  map?: Record<string, StateEntry['state'] | StateEntry>;
  /** A long-running operation (no status word): `done` and `error` paths, error codes to states and names. */
  operation?: { done: string; error: string; states?: Record<string, StateEntry['state']>; codes?: Record<string, string> };
  /** A failed task whose code (at `path`) names another end, e.g. the account cancelled it. */
  by_code?: { path: string; map: Record<string, StateEntry['state']> };
}

export interface TextSpec {
  path?: string;
  value?: string;
  default?: string;
  /** A list at `path` read as its strings joined with this. */
  join?: string;
}

export interface ResultSpec {
  url?: string;
  expiry?: 'signed' | { after_s: number };
  download?: {
    url?: string;
    file?: { id: string; pattern?: string; path: string; url: string };
    /** Which downloads carry the channel's credentials: none, or its own origin only. */
    key?: 'none' | 'same_origin';
  };
  missing?: { code: string; message: string };
}

export interface UsageSpec {
  unit: 'tokens' | 'seconds' | 'videos';
  paths: string[];
  round?: boolean;
  resolution?: { path: string; format: string };
}

export interface TaskSpec {
  status: StatusSpec;
  failure?: { code?: TextSpec; message?: TextSpec };
  moderation?: { any: ({ path: string } & Test)[]; code: string; message?: TextSpec };
  result: ResultSpec;
  progress?: { path: string; scale?: number };
  usage?: UsageSpec;
  updated_at?: { paths: string[]; format: 'unix_s' | 'unix_ms' | 'datetime'; utc_offset_h?: number };
}

export interface RuleSpec {
  when: Condition;
  param: string;
  message: string;
}

export interface EstimateSpec {
  unit: 'tokens' | 'seconds' | 'videos';
  duration: number;
  resolution?: string;
  ratio?: string;
  max_duration?: number;
  /** Provider fields in metadata that stand for a neutral value when the request leaves it out. */
  metadata?: { duration?: string; resolution?: string; ratio?: string; frames?: string; resolution_map?: Record<string, string> };
  /** tokens: width × height × fps × seconds / divisor, from the frame-size table. */
  tokens?: { divisor: number; fallback_resolution: string; fallback_ratio: string };
}

export interface VideosSpec {
  modes: VideoModeName[];
  /** The generation parameters the provider takes; absent: all. */
  params?: string[];
  metadata?: { into?: string; fields?: Record<string, string>; reserved?: string[] };
  /** The image decides the shape outside text mode: a ratio is refused there and a size means a resolution. */
  shape_from_image?: boolean;
  frame_sizes?: Record<string, string | Record<string, string>>;
  /** A ratio must be in the frame-size table at the resolution (text mode). */
  strict_ratios?: boolean;
  inline_images?: { types: string[] };
  /** Hook: image upload. Each client image (fetched as for inline_images) is POSTed as multipart `field` to `path`; `{image.<role>|uploaded}` is the id the answer keeps at `id`. */
  upload_images?: { path: string; field: string; id: string };
  maps?: Record<string, Record<string, string>>;
  rules?: RuleSpec[];
  create: CreateVariant | CreateVariant[];
  task_id: TaskIdSpec;
  callback?: { retry_without?: { code: string; message: string } };
  get: EndpointSpec;
  cancel?: EndpointSpec;
  list?: ListSpec;
  task: TaskSpec;
  estimate: EstimateSpec;
  lifetime: { seconds: number; param?: 'execution_expires_after' };
}

export interface ModelSpec {
  id?: string;
  match?: string;
  modes?: VideoModeName[];
  durations?: number[];
  resolutions?: string[];
  ratios?: string[];
  fps?: number[];
  default_resolution?: string;
  /** What it renders without a duration (the estimate, and `{default_duration}` of templates). */
  default_duration?: number;
  facts?: Record<string, string | number | boolean>;
  /** Offered by the embedded default at this list price. */
  offer?: { modes?: VideoModeName[]; price: ModelConfig['price'] };
}

export interface Manifest {
  type: string;
  name: string;
  owned_by: string;
  defaults?: { base_url?: string; env?: { api_key: string; api_secret?: string }; simulated?: boolean };
  needs_base_url?: boolean;
  simulator?: { path: string; claims: { videos?: string; images?: string } };
  api: ApiSpec;
  videos: VideosSpec;
  model_defaults?: Omit<ModelSpec, 'id' | 'match' | 'offer'>;
  models: ModelSpec[];
}
