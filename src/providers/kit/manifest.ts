import type { BalanceSpec } from '../balance.js';
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

/** A dotted path, or several: the first that holds a value wins. */
export type Paths = string | string[];

export interface ErrorSpec {
  message?: Paths;
  code?: Paths;
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
  /** Whether task reads are checked too (default true); false when a read's failure code is its task's own failure. */
  task_reads?: boolean;
}

/** A value a channel of this type sets beside its credentials (`settings.<name>`), e.g. a project. */
export interface SettingSpec {
  required?: boolean;
  default?: string;
  pattern?: string;
  description?: string;
}

export interface ApiSpec {
  /** Prefix of every path; may name the channel's settings (`{settings.project}`). */
  base_path?: string;
  /** The channel settings this type takes. */
  settings?: Record<string, SettingSpec>;
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

/** A second read once the first answer passes `when`: its answer goes into the task object at `into`. */
export interface ThenSpec {
  when: Condition;
  method?: 'GET' | 'POST';
  path: string;
  into: string;
  /** A 4xx answer (not 401, 403, 404, 408, 429) is the task's own failure: {status, code, message} goes here. */
  errors_into?: string;
}

export interface ReadSpec extends EndpointSpec {
  then?: ThenSpec;
}

export interface CreateVariant extends EndpointSpec {
  name?: string;
  when?: Condition;
  /** Images: the most images one call of this variant makes (instead of the model's `per_call`). */
  per_call?: number;
  /** Images: this variant's body encoding (instead of `images.encoding`). */
  encoding?: 'json' | 'multipart';
}

export interface TaskIdSpec {
  path: string;
  pattern?: string;
  /** The id kept by the gateway, from `{value}` (the provider's id), `{variant}`, `{model}` and `{request.<path>}` (the create body sent). */
  store?: string;
  /** What a kept id must look like before it goes into a read path; its named groups are `{id.<name>}` in reads. */
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
  path?: Paths;
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
  url?: Paths;
  expiry?: 'signed' | { after_s: number };
  download?: {
    url?: string;
    file?: { id: string; pattern?: string; path: string; url: string };
    /** Which downloads carry the channel's credentials: none, or its own origin only. */
    key?: 'none' | 'same_origin';
    /**
     * The video inline in the task (base64 at `path`): the gateway keeps the task without it and
     * reads the task again to serve the bytes.
     */
    inline?: { path: string; mime?: string };
    /**
     * A Cloud Storage object (`gs://bucket/object` at `uri`), read through the JSON API at the
     * origin the channel setting `origin_setting` names, with the channel's credentials.
     */
    gcs?: { uri: string; origin_setting: string };
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
  get: ReadSpec;
  cancel?: EndpointSpec;
  list?: ListSpec;
  task: TaskSpec;
  estimate: EstimateSpec;
  lifetime: { seconds: number; param?: 'execution_expires_after' };
}

/** An image model's accepted values; a value outside a list is refused with a 400 naming the list. */
export interface ImageModelSpec {
  /** What the model does (default: generate, and edit when the manifest has an edit call). */
  operations?: ('generate' | 'edit')[];
  /** The sizes it renders (`WxH`), each with the aspect ratio it stands for, or a plain list. */
  sizes?: Record<string, string> | string[];
  /** Aspect ratios a client may name instead (`aspect_ratio`); default: the ratios of `sizes`. */
  ratios?: string[];
  /** Free sizes: each side from min to max, a multiple of `multiple_of`, at most `max_pixels` in all. */
  dimensions?: { min: number; max: number; multiple_of?: number; max_pixels?: number };
  /** Resolution tiers a client may name as the size (`1K`, `2K`, `4K`). */
  resolutions?: string[];
  /** The size assumed when the client sends none (for the credit hold and `{size}`). */
  default_size?: string;
  qualities?: string[];
  /** Output formats (`output_format`: png, jpeg, webp). */
  formats?: string[];
  /** The most images one request may ask for. */
  max_n?: number;
  /** The most images one upstream call makes (1: the gateway sends n calls). */
  per_call?: number;
  seed?: boolean;
  negative_prompt?: boolean;
  /** An edit may carry a mask. */
  mask?: boolean;
  /** Input images (edit uploads, or `image` references on a generation) one call takes; 0: none. */
  max_images?: number;
  /** The tokens one output image is billed, for a model priced per token (the credit hold). */
  tokens_per_image?: number;
  /** Polling of a queued model: interval and how long the client is kept waiting. */
  wait?: { interval_ms?: number; timeout_s?: number };
}

export interface ModelSpec {
  id?: string;
  match?: string;
  modes?: VideoModeName[];
  durations?: number[];
  resolutions?: string[];
  ratios?: string[];
  fps?: number[];
  /** Whether the model renders sound when asked (`generate_audio`); a model that does not is refused it. */
  audio?: boolean;
  default_resolution?: string;
  /** What it renders without a duration (the estimate, and `{default_duration}` of templates). */
  default_duration?: number;
  facts?: Record<string, string | number | boolean>;
  /** An image model (the manifest's `images` capability), with what it accepts. */
  image?: ImageModelSpec;
  /** Offered by the embedded default at this list price. */
  offer?: { modes?: VideoModeName[]; price: ModelConfig['price'] };
}

/** Where images are in an answer: a list (`*` flattens lists on the way) and, in each item, a URL or base64. */
export interface ImageResultSpec {
  items: string;
  url?: string;
  b64?: string;
  mime?: string;
  /** The prompt the provider says it drew, returned as the item's `revised_prompt`. */
  revised_prompt?: string;
  /** A list beside the items: an item whose entry is true is withheld (flagged by the provider's safety checker). */
  flagged?: string;
}

export interface ImageUsageSpec {
  /** images: a count; tokens: output tokens (input tokens from `input`); megapixels: the pixels billed. */
  unit: 'images' | 'tokens' | 'megapixels';
  paths: string[];
  input?: string[];
  /** The counts also go to the client as OpenAI's `usage` object (tokens). */
  report?: boolean;
}

/** What happens to a client field the manifest does not use and the model's facts do not describe. */
export interface OtherFieldsSpec {
  /** Sent on unchanged as top-level body fields: every such field (`*`) or these. */
  pass?: '*' | string[];
  /** Left out without a word: every such field (`*`) or these. */
  drop?: '*' | string[];
  /** Refused with a 400 even where `pass` or `drop` says `*`. */
  refuse?: string[];
}

export interface ImageTaskSpec {
  id: { path: string; pattern?: string };
  /** The read: a path with `{id}` on the channel, or a polling URL the create answer holds. */
  get?: EndpointSpec;
  poll_url?: { path: string; key: 'none' | 'same_origin' | 'same_site' };
  /** Where a finished task's images are: a URL its last read holds (fetched as `poll_url` says, else without the key). */
  result_url?: { path: string };
  cancel?: EndpointSpec;
  status: StatusSpec;
  failure?: { code?: TextSpec; message?: TextSpec };
  /** Seconds a task is followed after its client stopped waiting, to settle what it costs. */
  lifetime_s?: number;
}

export interface ImagesSpec {
  /** Client fields passed on as `{extra.<name>}`, as the client sent them; any other unknown field is refused (unless `other_fields` says). */
  extra?: string[];
  /** Client fields outside `extra` that the model's facts do not describe: passed on, dropped or refused (the default). */
  other_fields?: OtherFieldsSpec;
  /** When n fans out into several calls, the images of those that succeeded are returned though others failed. */
  partial?: boolean;
  /** Top-level fields of the provider's answer copied into the client's (`created`, `usage` and others). */
  answer?: { copy: string[] };
  /** Image types a provider takes inline (fetching `image` URLs of a generation). */
  inline_images?: { types: string[] };
  maps?: Record<string, Record<string, string>>;
  rules?: RuleSpec[];
  /** The calls: the first variant whose `when` holds (`operation` is generate or edit). */
  create: CreateVariant | CreateVariant[];
  /** JSON (default), or multipart/form-data with images as file parts. */
  encoding?: 'json' | 'multipart';
  /** Present for a provider that answers with a task to poll. */
  task?: ImageTaskSpec;
  /** Where the images are; a list when the provider's calls answer in more than one shape. */
  result: ImageResultSpec | ImageResultSpec[];
  /** A finished answer without images is a moderation refusal when one of these holds. */
  /**
   * The provider's content-safety refusal, answered 400 `content_policy_violation` (nothing charged):
   * a finished answer without images where one of `any` holds, or an error answer matching `errors`.
   */
  moderation?: { any?: ({ path: string | string[] } & Test)[]; errors?: { status?: number[]; codes?: (string | number)[] }; code?: string; message?: TextSpec };
  usage?: ImageUsageSpec;
}

export interface ProbeSpec {
  task_id?: string;
  path?: string;
  from?: 'base' | 'origin';
  healthy?: number[];
  healthy_codes?: (string | number)[];
}

export interface Manifest {
  type: string;
  name: string;
  owned_by: string;
  defaults?: { base_url?: string; env?: { api_key: string; api_secret?: string }; simulated?: boolean };
  needs_base_url?: boolean;
  simulator?: { path: string; claims: { videos?: string; images?: string } };
  api: ApiSpec;
  /** The balance or quota read (src/providers/balance.ts). */
  balance?: BalanceSpec;
  /** The health probe: an unknown task read, or a GET of a path. */
  probe?: ProbeSpec;
  videos?: VideosSpec;
  images?: ImagesSpec;
  model_defaults?: Omit<ModelSpec, 'id' | 'match' | 'offer'>;
  models: ModelSpec[];
}

/** A manifest with the video capability (what the video engine reads). */
export type VideoManifest = Manifest & { videos: VideosSpec };
/** A manifest with the image capability. */
export type ImageManifest = Manifest & { images: ImagesSpec };

/** The manifest as the video engine reads it; one without the capability is a programming error. */
export function withVideos(m: Manifest): VideoManifest {
  if (!m.videos) throw new Error(`the ${m.type} manifest has no videos capability`);
  return m as VideoManifest;
}
