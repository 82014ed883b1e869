import { Type, type Static } from '@sinclair/typebox';

// The one description of mediagate.yaml. Defaults live here so docs/configuration.md,
// the loader and the embedded default all agree.

const Int = (opts: { minimum?: number; maximum?: number; default?: number } = {}) => Type.Integer(opts);

// A provider type from src/providers/index.ts; the loader checks it against that list (and names
// the allowed values), so adding a provider never touches this file.
export const ChannelType = Type.String({ minLength: 1 });

/** The chat wire formats an upstream may speak (see docs/chat.md). */
export const ChatWireFormat = Type.Union([Type.Literal('openai'), Type.Literal('responses'), Type.Literal('anthropic'), Type.Literal('gemini')]);

export const ChannelSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_.-]+$' }),
    type: ChannelType,
    // Omitted only for a `simulator` channel: it then points at the in-process simulator.
    base_url: Type.Optional(Type.String({ pattern: '^https?://' })),
    api_key: Type.Optional(Type.String()),
    // The second credential of providers that sign their requests (Kling: the secret key).
    api_secret: Type.Optional(Type.String()),
    // Values a provider type declares beside the credentials (Vertex AI: project, region); the
    // provider's manifest names the allowed keys, their defaults and forms.
    settings: Type.Optional(Type.Record(Type.String({ pattern: '^[a-z][a-z0-9_]*$' }), Type.String())),
    priority: Int({ default: 0 }),
    weight: Int({ minimum: 1, default: 1 }),
    enabled: Type.Boolean({ default: true }),
    models: Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }),
    // gateway model id -> upstream model id
    model_map: Type.Record(Type.String(), Type.String(), { default: {} }),
    // Chat wire format spoken upstream: `responses` on an `openai` channel (models only served by
    // the Responses API); any format on a `simulator` channel (else it answers in the client's).
    upstream_format: Type.Optional(ChatWireFormat),
    // At most this many video-task polls in flight against this channel.
    poll_concurrency: Int({ minimum: 1, default: 8 }),
    // URLs this channel hands the gateway (results, redirects) may point at private, loopback or
    // link-local addresses. Absent: true for `simulator` channels, false for every other type.
    allow_private_network: Type.Optional(Type.Boolean()),
    // Seconds between scheduled tests of this channel (its health probe, nothing billable); 0 = none.
    // Absent: relay.health.test_interval_s (itself 0, none, by default).
    test_interval_s: Type.Optional(Int({ minimum: 0, maximum: 86400 })),
  },
  { additionalProperties: false },
);

export const ModelKind = Type.Union([Type.Literal('chat'), Type.Literal('image'), Type.Literal('video')]);
export const VideoMode = Type.Union([
  Type.Literal('text'),
  Type.Literal('first_frame'),
  Type.Literal('first_last_frame'),
  Type.Literal('reference_image'),
]);

const Usd = Type.Number({ minimum: 0 });

const FactorValue = Type.Union([Type.String({ minLength: 1 }), Type.Number(), Type.Boolean()]);

export const PriceFactorSchema = Type.Object(
  {
    // Every dimension named must match (one value, or a list of which any matches).
    when: Type.Record(Type.String({ minLength: 1 }), Type.Union([FactorValue, Type.Array(FactorValue, { minItems: 1 })]), { minProperties: 1 }),
    multiply: Type.Number({ exclusiveMinimum: 0, maximum: 1000 }),
    // Shown in what a usage row was billed by; default: the conditions.
    label: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  },
  { additionalProperties: false },
);

export const PriceSchema = Type.Object(
  {
    // chat, USD per million tokens
    input_per_million: Type.Optional(Usd),
    output_per_million: Type.Optional(Usd),
    // chat, USD per million input tokens the provider read from its prompt cache (default: the input rate)
    cached_input_per_million: Type.Optional(Usd),
    // chat, USD per million input tokens the provider wrote to its prompt cache (Anthropic; default: the input rate)
    cache_write_per_million: Type.Optional(Usd),
    // image, USD per image: one rate, or one per size and/or quality ({"1024x1024": 0.04, "hd": 0.08, "hd 1024x1792": 0.12})
    per_image: Type.Optional(Type.Union([Usd, Type.Record(Type.String({ minLength: 1 }), Usd)])),
    // image, USD per megapixel of output (providers that bill by pixels)
    per_megapixel: Type.Optional(Usd),
    // video, USD per million video tokens (providers that bill tokens)
    per_million_tokens: Type.Optional(Usd),
    // video, USD per second of output: one rate, or one per resolution ({"720p": 0.1, "1080p": 0.15})
    per_second: Type.Optional(Type.Union([Usd, Type.Record(Type.String({ minLength: 1 }), Usd)])),
    // video, USD per generated video
    per_video: Type.Optional(Usd),
    // Multipliers on the price when the request matches: [{when: {audio: true}, multiply: 1.5}].
    // Dimensions and their values are checked per model kind (src/config/price-rule.ts).
    factors: Type.Optional(Type.Array(PriceFactorSchema, { minItems: 1 })),
  },
  { additionalProperties: false },
);

export const ModelSchema = Type.Object(
  {
    kind: ModelKind,
    // Defaults to "mediagate" when absent.
    owned_by: Type.Optional(Type.String({ minLength: 1 })),
    created: Type.Optional(Type.Integer({ minimum: 0 })),
    modes: Type.Optional(Type.Array(VideoMode, { minItems: 1 })),
    // Overrides the supported_endpoint_types derived from `kind`.
    endpoint_types: Type.Optional(Type.Array(Type.String())),
    // Requests per minute across all keys; 0 = no model limit (then limits.model_rpm applies).
    rpm: Type.Optional(Type.Integer({ minimum: 0 })),
    price: Type.Optional(PriceSchema),
    // Image models whose provider answers with a task: how often the gateway polls it and how long
    // the client is kept waiting before a 504 (the task is still followed and settled).
    wait: Type.Optional(
      Type.Object(
        {
          interval_ms: Type.Optional(Type.Integer({ minimum: 10, maximum: 60_000 })),
          timeout_s: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 3600 })),
        },
        { additionalProperties: false },
      ),
    ),
    // Chat: input tokens one image part may cost at most, for the credit hold (default 1600).
    image_input_tokens: Type.Optional(Type.Integer({ minimum: 0 })),
  },
  { additionalProperties: false },
);

// Where finished videos are archived, so /content keeps working after the provider's URL and
// retention are gone (docs/video.md, "Archive").
export const StorageSchema = Type.Object(
  {
    type: Type.Union([Type.Literal('none'), Type.Literal('local'), Type.Literal('s3')], { default: 'none' }),
    // type local: the directory (relative to the config file; to the working directory in the embedded default).
    dir: Type.String({ minLength: 1, default: './data/videos' }),
    // type s3: any S3-compatible store.
    s3: Type.Optional(
      Type.Object(
        {
          bucket: Type.String({ minLength: 3, maxLength: 63 }),
          region: Type.String({ minLength: 1, default: 'us-east-1' }),
          // Omitted for AWS itself; set for MinIO, R2, TOS, OSS and the like.
          endpoint: Type.Optional(Type.String({ pattern: '^https?://' })),
          access_key_id: Type.Optional(Type.String({ minLength: 1 })),
          secret_access_key: Type.Optional(Type.String({ minLength: 1 })),
          // Object keys are <prefix><task_id>.mp4.
          prefix: Type.String({ default: 'videos/' }),
          // Path-style URLs (endpoint/bucket/key): what most S3-compatible servers want.
          force_path_style: Type.Boolean({ default: true }),
        },
        { additionalProperties: false },
      ),
    ),
    // provider: fail_reason of a SUCCESS is the provider's URL (the gateway's /content URL where only the channel key fetches the video); gateway: always the gateway's /content URL.
    public_url_mode: Type.Union([Type.Literal('provider'), Type.Literal('gateway')], { default: 'provider' }),
    // Archived videos older than this many days are deleted; 0 keeps them.
    retain_days: Type.Number({ minimum: 0, default: 0 }),
    // Seconds to wait before each further attempt of a failed copy; the copy gives up after the last.
    retry_delays_s: Type.Array(Type.Number({ minimum: 0 }), { minItems: 1, default: [5, 30, 120, 600, 1800, 3600, 7200] }),
    // How often an instance looks for copies to make, and how many it makes at once.
    tick_ms: Int({ minimum: 10, default: 1000 }),
    concurrency: Int({ minimum: 1, maximum: 64, default: 2 }),
    lease_ms: Int({ minimum: 1000, default: 600000 }),
  },
  { additionalProperties: false, default: {} },
);

// Completion webhooks of video tasks (docs/video.md, "Webhooks").
export const WebhooksSchema = Type.Object(
  {
    // Lets callback_url be http:// (and point at loopback): for local development and tests only.
    allow_insecure: Type.Boolean({ default: false }),
    // Seconds to wait before each further attempt; after the last the delivery is given up. The
    // default spans about 28 h.
    retry_delays_s: Type.Array(Type.Number({ minimum: 0 }), { minItems: 1, default: [5, 30, 120, 600, 1800, 3600, 7200, 14400, 28800, 43200] }),
    // One attempt, connect to last response byte.
    timeout_ms: Int({ minimum: 100, maximum: 60000, default: 5000 }),
    // How often an instance looks for due deliveries, how many it sends at once, how long its claim lasts.
    tick_ms: Int({ minimum: 10, default: 1000 }),
    concurrency: Int({ minimum: 1, maximum: 256, default: 16 }),
    lease_ms: Int({ minimum: 1000, default: 60000 }),
    // After `keys webhook-secret` rotates a key's secret, the old one keeps signing this long.
    rotation_grace_s: Int({ minimum: 0, default: 86400 }),
  },
  { additionalProperties: false, default: {} },
);

export const ConfigSchema = Type.Object(
  {
    server: Type.Object(
      {
        host: Type.String({ default: '127.0.0.1' }),
        port: Int({ minimum: 0, maximum: 65535, default: 8080 }),
        body_limit_mb: Type.Number({ exclusiveMinimum: 0, default: 20 }),
        // Seconds to wait for in-flight requests on SIGTERM/SIGINT.
        shutdown_grace_s: Type.Number({ minimum: 0, default: 10 }),
        // A whole request (headers and body) must arrive within this; its headers within the next.
        request_timeout_ms: Int({ minimum: 100, default: 60000 }),
        headers_timeout_ms: Int({ minimum: 100, default: 15000 }),
        // Open connections from one client address; more are closed at once. 0 = no cap.
        max_connections_per_client: Int({ minimum: 0, default: 1024 }),
        // The absolute base of URLs the gateway hands out (video /content links, provider callbacks),
        // e.g. https://gateway.example.com. Unset: the request's own scheme and Host.
        public_url: Type.Optional(Type.String({ pattern: '^https?://[^\\s/?#]+(/[^\\s?#]*)?$' })),
        // Reverse proxies (addresses or CIDRs) whose X-Forwarded-For and X-Forwarded-Proto are
        // believed: the admin API's client address (login limit, audit) and https (Secure cookie).
        trusted_proxies: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { default: [] }),
      },
      { additionalProperties: false, default: {} },
    ),
    database: Type.Object(
      {
        url: Type.String({ minLength: 1, default: 'sqlite:./data/mediagate.db' }),
        // PostgreSQL: opening a connection, one statement (server side), one query's answer (client
        // side). A timeout marks the database down: requests answer 503 at once until a probe answers.
        connect_timeout_ms: Int({ minimum: 100, default: 3000 }),
        statement_timeout_ms: Int({ minimum: 100, default: 5000 }),
        query_timeout_ms: Int({ minimum: 100, default: 6000 }),
        // SQLite: how long a write waits for a lock held by another process before answering 503.
        busy_timeout_ms: Int({ minimum: 0, maximum: 60000, default: 1000 }),
      },
      { additionalProperties: false, default: {} },
    ),
    redis: Type.Object(
      {
        url: Type.Optional(Type.String({ pattern: '^rediss?://' })),
        key_prefix: Type.String({ default: 'mediagate:' }),
      },
      { additionalProperties: false, default: {} },
    ),
    // OpenTelemetry traces and metrics over OTLP (docs/observability.md). OpenTelemetry's standard
    // environment variables (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_TRACES_SAMPLER, …) win over these.
    telemetry: Type.Object(
      {
        enabled: Type.Boolean({ default: false }),
        service_name: Type.String({ minLength: 1, default: 'mediagate' }),
        // The collector's OTLP/HTTP base URL (/v1/traces and /v1/metrics are appended).
        endpoint: Type.Optional(Type.String({ pattern: '^https?://[^\\s]+$' })),
        protocol: Type.Union([Type.Literal('http/protobuf'), Type.Literal('http/json')], { default: 'http/protobuf' }),
        // Headers sent with every export (a collector's auth); kept out of logs and errors.
        headers: Type.Record(Type.String({ minLength: 1 }), Type.String(), { default: {} }),
        sampler: Type.Union(
          ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'].map((s) => Type.Literal(s)),
          { default: 'parentbased_always_on' },
        ),
        // The ratio of the *traceidratio samplers.
        sampler_arg: Type.Number({ minimum: 0, maximum: 1, default: 1 }),
        // Finished spans are sent in batches at most this long after they end.
        export_interval_ms: Int({ minimum: 10, maximum: 60000, default: 5000 }),
        metrics: Type.Boolean({ default: true }),
        metrics_interval_ms: Int({ minimum: 100, maximum: 3600000, default: 60000 }),
      },
      { additionalProperties: false, default: {} },
    ),
    // Searchable request logs (docs/observability.md): metadata of every model request, and its
    // bodies (scrubbed, truncated) for the keys and models named here.
    request_logs: Type.Object(
      {
        enabled: Type.Boolean({ default: false }),
        retention_days: Int({ minimum: 1, maximum: 3650, default: 7 }),
        body_keys: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { default: [] }),
        body_models: Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { default: [] }),
        max_body_bytes: Int({ minimum: 256, maximum: 1048576, default: 16384 }),
      },
      { additionalProperties: false, default: {} },
    ),
    log: Type.Object(
      { level: Type.Union([Type.Literal('fatal'), Type.Literal('error'), Type.Literal('warn'), Type.Literal('info'), Type.Literal('debug'), Type.Literal('trace'), Type.Literal('silent')], { default: 'info' }) },
      { additionalProperties: false, default: {} },
    ),
    simulator: Type.Object(
      {
        // Run the simulator in-process on a loopback port (the embedded default does).
        embedded: Type.Boolean({ default: false }),
        port: Int({ minimum: 0, maximum: 65535, default: 0 }),
        // How long a simulated video task takes from queued to succeeded.
        video_seconds: Type.Number({ minimum: 0, default: 10 }),
        // Lifetime of the simulator's signed video URLs.
        url_ttl_s: Type.Integer({ minimum: 1, default: 86400 }),
      },
      { additionalProperties: false, default: {} },
    ),
    limits: Type.Object(
      {
        // Defaults for keys created without --rpm / --concurrency; 0 = unlimited.
        key_rpm: Int({ minimum: 0, default: 0 }),
        key_concurrency: Int({ minimum: 0, default: 0 }),
        // Default per-model requests per minute when a model sets none; 0 = unlimited.
        model_rpm: Int({ minimum: 0, default: 0 }),
        // A chat or image request's credit hold still open after this long belongs to a process
        // that died mid-request; it is released. Longer than any request may take.
        abandoned_hold_s: Int({ minimum: 60, default: 3600 }),
        // Chat and image holds come from a lease of the key's balance kept in memory per instance
        // and written back in batches (docs/limits.md); false: one database transaction per move.
        credit_leases: Type.Boolean({ default: true }),
        // A lease not renewed for this long returns to the balance (a crashed instance's money).
        credit_lease_ttl_s: Int({ minimum: 2, maximum: 3600, default: 30 }),
        // Settled amounts are written back at most this long after the settle.
        credit_flush_ms: Int({ minimum: 10, maximum: 10000, default: 250 }),
        // The IANA time zone whose calendar days, weeks (from Monday) and months budgets reset by.
        budget_time_zone: Type.String({ default: 'UTC' }),
        // budget.threshold webhooks (docs/limits.md): sent to `url`, signed with `secret`, once per
        // threshold (percent of the budget spent) per budget window.
        budget_alerts: Type.Object(
          {
            url: Type.Optional(Type.String({ maxLength: 2048 })),
            secret: Type.Optional(Type.String({ pattern: '^whsec_[A-Za-z0-9+/=]{24,}$' })),
            thresholds: Type.Array(Type.Number({ exclusiveMinimum: 0, maximum: 1000 }), { minItems: 1, maxItems: 16, default: [50, 80, 100] }),
          },
          { additionalProperties: false, default: {} },
        ),
      },
      { additionalProperties: false, default: {} },
    ),
    relay: Type.Object(
      {
        connect_timeout_ms: Int({ minimum: 1, default: 5000 }),
        first_byte_timeout_ms: Int({ minimum: 1, default: 60000 }),
        stream_idle_timeout_ms: Int({ minimum: 1, default: 60000 }),
        max_attempts: Int({ minimum: 1, maximum: 10, default: 3 }),
        breaker_failures: Int({ minimum: 1, default: 5 }),
        breaker_cooldown_ms: Int({ minimum: 1, default: 30000 }),
        // A channel failing beyond error_rate over at least min_requests attempts in the last
        // window_s seconds (every instance's, through Redis) is taken out of rotation and probed
        // on a doubling backoff until it answers (docs/channels.md, "Health").
        health: Type.Object(
          {
            enabled: Type.Boolean({ default: true }),
            window_s: Int({ minimum: 5, maximum: 3600, default: 60 }),
            min_requests: Int({ minimum: 1, default: 20 }),
            error_rate: Type.Number({ exclusiveMinimum: 0, maximum: 1, default: 0.5 }),
            probe_initial_ms: Int({ minimum: 10, default: 5000 }),
            probe_max_ms: Int({ minimum: 10, default: 300000 }),
            // Seconds between scheduled tests of every enabled channel in rotation that sets no
            // test_interval_s of its own (the same probe, nothing billable); 0 = none, the default.
            test_interval_s: Int({ minimum: 0, maximum: 86400, default: 0 }),
          },
          { additionalProperties: false, default: {} },
        ),
        // Upstream sockets per origin: every held stream needs one.
        max_connections_per_origin: Int({ minimum: 1, default: 8192 }),
        // Largest upstream answer read whole (JSON answers), and largest single stream event or
        // line; beyond them the upstream is cut off and the client gets 502 upstream_error.
        max_body_mb: Type.Number({ exclusiveMinimum: 0, default: 32 }),
        max_stream_event_mb: Type.Number({ exclusiveMinimum: 0, default: 4 }),
      },
      { additionalProperties: false, default: {} },
    ),
    tasks: Type.Object(
      {
        poll_interval_ms: Int({ minimum: 10, default: 5000 }),
        // Poll interval of tasks whose provider calls back (server.public_url set; Ark, Kling, Hailuo):
        // a callback makes the poller read the task at once; this slower poll is the fallback.
        callback_poll_interval_ms: Int({ minimum: 10, default: 60000 }),
        // How often the poller looks for due tasks.
        tick_ms: Int({ minimum: 10, default: 1000 }),
        lease_ms: Int({ minimum: 100, default: 30000 }),
        batch: Int({ minimum: 1, default: 100 }),
        max_backoff_ms: Int({ minimum: 10, default: 60000 }),
        // Seconds past the provider's execution expiry before the gateway fails a task.
        grace_s: Int({ minimum: 0, default: 600 }),
        // After the gateway fails a task by its timeout, it reads it again every max_backoff_ms for
        // this long: a success the provider reports late is delivered and charged. 0: never.
        late_read_s: Int({ minimum: 0, default: 86400 }),
      },
      { additionalProperties: false, default: {} },
    ),
    images: Type.Object(
      {
        // Upload limits of POST /v1/images/edits (files are spooled to disk, never held whole).
        // server.body_limit_mb also caps a body that declares its Content-Length.
        max_files: Int({ minimum: 1, maximum: 100, default: 16 }),
        max_file_mb: Type.Number({ exclusiveMinimum: 0, default: 20 }),
        max_total_mb: Type.Number({ exclusiveMinimum: 0, default: 20 }),
        // Largest `n` (images per request) the gateway accepts.
        max_n: Int({ minimum: 1, maximum: 100, default: 10 }),
        // How long a gateway image URL (response_format url of a provider that returns bytes) serves.
        url_ttl_s: Int({ minimum: 60, maximum: 7 * 86400, default: 3600 }),
      },
      { additionalProperties: false, default: {} },
    ),
    responses: Type.Object(
      {
        // Days a stored Responses API answer (and its items) stays retrievable; `store: false`
        // requests keep nothing.
        retain_days: Type.Number({ exclusiveMinimum: 0, default: 30 }),
        // What one key may keep stored; past either, its least recently used responses are evicted.
        max_per_key: Int({ minimum: 1, default: 10_000 }),
        max_mb_per_key: Type.Number({ exclusiveMinimum: 0, default: 100 }),
      },
      { additionalProperties: false, default: {} },
    ),
    idempotency: Type.Object(
      {
        // Seconds a request's Idempotency-Key and its first answer are kept (replayed to repeats).
        ttl_s: Int({ minimum: 1, maximum: 30 * 86400, default: 86400 }),
        // Seconds a repeat waits for the first request with its key to finish before 409
        // idempotency_in_progress; 0 answers 409 at once.
        wait_s: Type.Number({ minimum: 0, maximum: 600, default: 10 }),
      },
      { additionalProperties: false, default: {} },
    ),
    storage: StorageSchema,
    webhooks: WebhooksSchema,
    admin: Type.Object(
      {
        // The admin API (/admin/api/*) and the web console (/console). Off unless switched on.
        enabled: Type.Boolean({ default: false }),
        // "host:port" of a separate listener that serves only the admin API and the console; absent =
        // they are served on server.host:server.port beside the model endpoints.
        listen: Type.Optional(Type.String({ pattern: '^(\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9_.-]+):[0-9]{1,5}$' })),
        // Lifetime of a console session (the cookie and its row).
        session_ttl_s: Int({ minimum: 60, maximum: 7 * 86400, default: 8 * 3600 }),
        // Console login attempts per client address per minute.
        login_per_minute: Int({ minimum: 1, maximum: 1000, default: 10 }),
      },
      { additionalProperties: false, default: {} },
    ),
    providers: Type.Object(
      {
        // A directory of provider manifests (*.yaml, docs/providers.md), loaded at start and on
        // every reload; a relative path is relative to the config file.
        dir: Type.Optional(Type.String({ minLength: 1 })),
      },
      { additionalProperties: false, default: {} },
    ),
    channels: Type.Array(ChannelSchema, { default: [] }),
    models: Type.Record(Type.String({ minLength: 1 }), ModelSchema, { default: {} }),
  },
  { additionalProperties: false },
);

export type Config = Static<typeof ConfigSchema>;
export type ChannelConfig = Static<typeof ChannelSchema>;
export type ModelConfig = Static<typeof ModelSchema>;
export type StorageConfig = Static<typeof StorageSchema>;
export type WebhooksConfig = Static<typeof WebhooksSchema>;
export type ModelKindName = Static<typeof ModelKind>;
export type VideoModeName = Static<typeof VideoMode>;
export type PriceConfig = Static<typeof PriceSchema>;
export type PriceFactor = Static<typeof PriceFactorSchema>;
