import { Migrator, sql, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import type { Dialect } from './dialect.js';

// Migrations are written with Kysely's schema builder so the same code runs on SQLite and
// PostgreSQL. Where the two differ (auto-increment ids) the dialect is passed in.

export function migrations(dialect: Dialect): Record<string, Migration> {
  return {
    '0001_initial': {
      async up(db: Kysely<any>) {
        await db.schema
          .createTable('api_keys')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('name', 'text', (c) => c.notNull())
          .addColumn('key_hash', 'text', (c) => c.notNull().unique())
          .addColumn('key_prefix', 'text', (c) => c.notNull())
          .addColumn('models', 'text')
          .addColumn('rpm', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('concurrency', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('credit_micros', 'bigint')
          .addColumn('expires_at', 'bigint')
          .addColumn('revoked_at', 'bigint')
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .execute();

        await db.schema
          .createTable('models')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('first_seen_s', 'bigint', (c) => c.notNull())
          .execute();

        await db.schema
          .createTable('reservations')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('key_id', 'text', (c) => c.notNull())
          .addColumn('amount_micros', 'bigint', (c) => c.notNull())
          .addColumn('state', 'text', (c) => c.notNull())
          .addColumn('charged_micros', 'bigint', (c) => c.notNull().defaultTo(0))
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addColumn('closed_at', 'bigint')
          .execute();
        await db.schema.createIndex('reservations_key_state').on('reservations').columns(['key_id', 'state']).execute();

        await db.schema
          .createTable('tasks')
          .addColumn('task_id', 'text', (c) => c.primaryKey())
          .addColumn('key_id', 'text', (c) => c.notNull())
          .addColumn('model', 'text', (c) => c.notNull())
          .addColumn('channel', 'text', (c) => c.notNull())
          .addColumn('upstream_model', 'text', (c) => c.notNull())
          .addColumn('action', 'text', (c) => c.notNull())
          .addColumn('status', 'text', (c) => c.notNull())
          .addColumn('fail_reason', 'text', (c) => c.notNull().defaultTo(''))
          .addColumn('submit_time', 'bigint', (c) => c.notNull())
          .addColumn('start_time', 'bigint', (c) => c.notNull().defaultTo(0))
          .addColumn('finish_time', 'bigint', (c) => c.notNull().defaultTo(0))
          .addColumn('progress', 'text', (c) => c.notNull())
          .addColumn('data', 'text', (c) => c.notNull())
          .addColumn('reservation_id', 'text')
          .addColumn('estimated_units', 'bigint', (c) => c.notNull().defaultTo(0))
          .addColumn('next_poll_at', 'bigint', (c) => c.notNull())
          .addColumn('lease_owner', 'text')
          .addColumn('lease_until', 'bigint', (c) => c.notNull().defaultTo(0))
          .addColumn('poll_failures', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('deadline_at', 'bigint', (c) => c.notNull())
          .addColumn('url_expires_at', 'bigint', (c) => c.notNull().defaultTo(0))
          .addColumn('updated_at', 'bigint', (c) => c.notNull())
          .execute();
        // The poller's scan: open tasks by due time.
        await db.schema.createIndex('tasks_open_due').on('tasks').columns(['status', 'next_poll_at']).execute();

        const usage = db.schema.createTable('usage');
        await (dialect === 'postgres'
          ? usage.addColumn('id', 'bigserial', (c) => c.primaryKey())
          : usage.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
        )
          .addColumn('key_id', 'text', (c) => c.notNull())
          .addColumn('model', 'text', (c) => c.notNull())
          .addColumn('channel', 'text', (c) => c.notNull())
          .addColumn('endpoint', 'text', (c) => c.notNull())
          .addColumn('status', 'integer', (c) => c.notNull())
          .addColumn('input_units', 'bigint', (c) => c.notNull().defaultTo(0))
          .addColumn('output_units', 'bigint', (c) => c.notNull().defaultTo(0))
          .addColumn('cost_micros', 'bigint', (c) => c.notNull().defaultTo(0))
          .addColumn('latency_ms', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .execute();
        await db.schema.createIndex('usage_key_time').on('usage').columns(['key_id', 'created_at']).execute();
      },
      async down(db: Kysely<any>) {
        for (const t of ['usage', 'tasks', 'reservations', 'models', 'api_keys']) await db.schema.dropTable(t).ifExists().execute();
      },
    },
    // Public task ids apart from the provider's: tasks created before keep task_id as their upstream id.
    '0002_task_upstream_id': {
      async up(db: Kysely<any>) {
        await db.schema.alterTable('tasks').addColumn('upstream_id', 'text', (c) => c.notNull().defaultTo('')).execute();
        await db.schema.alterTable('tasks').addColumn('billing', 'text', (c) => c.notNull().defaultTo('')).execute();
        await db.updateTable('tasks').set({ upstream_id: sql.ref('task_id') }).execute();
      },
      async down(db: Kysely<any>) {
        await db.schema.alterTable('tasks').dropColumn('billing').execute();
        await db.schema.alterTable('tasks').dropColumn('upstream_id').execute();
      },
    },
    // Operator access: admin tokens (stored as SHA-256, like keys) and the console's sessions.
    '0004a_admin_tokens': {
      async up(db: Kysely<any>) {
        await db.schema
          .createTable('admin_tokens')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('name', 'text', (c) => c.notNull())
          .addColumn('token_hash', 'text', (c) => c.notNull().unique())
          .addColumn('token_prefix', 'text', (c) => c.notNull())
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addColumn('last_used_at', 'bigint')
          .addColumn('revoked_at', 'bigint')
          .execute();
        await db.schema
          .createTable('admin_sessions')
          .addColumn('id_hash', 'text', (c) => c.primaryKey())
          .addColumn('token_id', 'text', (c) => c.notNull())
          .addColumn('csrf', 'text', (c) => c.notNull())
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addColumn('expires_at', 'bigint', (c) => c.notNull())
          .execute();
        await db.schema.createIndex('admin_sessions_token').on('admin_sessions').column('token_id').execute();
      },
      async down(db: Kysely<any>) {
        await db.schema.dropTable('admin_sessions').ifExists().execute();
        await db.schema.dropTable('admin_tokens').ifExists().execute();
      },
    },
    // Who did what, when: every admin action (API, console or CLI).
    '0004b_audit_log': {
      async up(db: Kysely<any>) {
        const t = db.schema.createTable('audit_log');
        await (dialect === 'postgres' ? t.addColumn('id', 'bigserial', (c) => c.primaryKey()) : t.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement()))
          .addColumn('at', 'bigint', (c) => c.notNull())
          .addColumn('actor', 'text', (c) => c.notNull())
          .addColumn('action', 'text', (c) => c.notNull())
          .addColumn('target', 'text', (c) => c.notNull().defaultTo(''))
          .addColumn('detail', 'text', (c) => c.notNull().defaultTo('{}'))
          .addColumn('ip', 'text', (c) => c.notNull().defaultTo(''))
          .execute();
        await db.schema.createIndex('audit_log_at').on('audit_log').columns(['at', 'id']).execute();
      },
      async down(db: Kysely<any>) {
        await db.schema.dropTable('audit_log').ifExists().execute();
      },
    },
    // The admin usage views page and aggregate the whole ledger by time, by model and by status.
    '0004c_usage_admin_indexes': {
      async up(db: Kysely<any>) {
        await db.schema.createIndex('usage_time').on('usage').columns(['created_at', 'id']).execute();
        await db.schema.createIndex('usage_model_time').on('usage').columns(['model', 'created_at']).execute();
        await db.schema.createIndex('tasks_submit').on('tasks').columns(['submit_time', 'task_id']).execute();
      },
      async down(db: Kysely<any>) {
        await db.schema.dropIndex('tasks_submit').ifExists().execute();
        await db.schema.dropIndex('usage_model_time').ifExists().execute();
        await db.schema.dropIndex('usage_time').ifExists().execute();
      },
    },
    // A task's timeline: one row per status move, written by the tasks repository.
    '0004d_task_events': {
      async up(db: Kysely<any>) {
        const t = db.schema.createTable('task_events');
        await (dialect === 'postgres' ? t.addColumn('id', 'bigserial', (c) => c.primaryKey()) : t.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement()))
          .addColumn('task_id', 'text', (c) => c.notNull())
          .addColumn('at', 'bigint', (c) => c.notNull())
          .addColumn('from_status', 'text', (c) => c.notNull().defaultTo(''))
          .addColumn('to_status', 'text', (c) => c.notNull())
          .addColumn('detail', 'text', (c) => c.notNull().defaultTo(''))
          .execute();
        await db.schema.createIndex('task_events_task').on('task_events').columns(['task_id', 'id']).execute();
      },
      async down(db: Kysely<any>) {
        await db.schema.dropTable('task_events').ifExists().execute();
      },
    },
    // A real cost above its hold that the balance could not cover is owed: the key is refused until
    // a top-up pays it (docs/limits.md). Per key the outstanding amount, per ledger row its part.
    '0005a_credit_overage': {
      async up(db: Kysely<any>) {
        await db.schema.alterTable('api_keys').addColumn('overage_micros', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
        await db.schema.alterTable('usage').addColumn('overage_micros', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
      },
      async down(db: Kysely<any>) {
        await db.schema.alterTable('usage').dropColumn('overage_micros').execute();
        await db.schema.alterTable('api_keys').dropColumn('overage_micros').execute();
      },
    },
    // Credit leases: part of a key's balance kept by one instance, reserved and settled in memory
    // (docs/limits.md). One row per instance and key; a row not renewed returns after expires_at.
    '0005b_credit_leases': {
      async up(db: Kysely<any>) {
        await db.schema
          .createTable('credit_leases')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('key_id', 'text', (c) => c.notNull())
          .addColumn('instance', 'text', (c) => c.notNull())
          .addColumn('amount_micros', 'bigint', (c) => c.notNull())
          .addColumn('expires_at', 'bigint', (c) => c.notNull())
          .execute();
        await db.schema.createIndex('credit_leases_key').on('credit_leases').column('key_id').execute();
        await db.schema.createIndex('credit_leases_expiry').on('credit_leases').column('expires_at').execute();
      },
      async down(db: Kysely<any>) {
        await db.schema.dropTable('credit_leases').ifExists().execute();
      },
    },
    // GET /v1/video/generations: a key's tasks newest first, optionally of one status or model. Each
    // filter has its own index ending in (submit_time, task_id), so a page is one index range scan
    // whatever the table holds (a B-tree is read backwards for the descending order).
    '0007a_task_list_indexes': {
      async up(db: Kysely<any>) {
        await db.schema.createIndex('tasks_key_submit').on('tasks').columns(['key_id', 'submit_time', 'task_id']).execute();
        await db.schema.createIndex('tasks_key_status_submit').on('tasks').columns(['key_id', 'status', 'submit_time', 'task_id']).execute();
        await db.schema.createIndex('tasks_key_model_submit').on('tasks').columns(['key_id', 'model', 'submit_time', 'task_id']).execute();
      },
      async down(db: Kysely<any>) {
        for (const i of ['tasks_key_submit', 'tasks_key_status_submit', 'tasks_key_model_submit']) await db.schema.dropIndex(i).ifExists().execute();
      },
    },
    // The archive's work list: one row per finished task whose video is to be (or was) copied to
    // storage. Copies are claimed with a lease, so one instance copies a task at a time.
    '0007b_task_archives': {
      async up(db: Kysely<any>) {
        await db.schema
          .createTable('task_archives')
          .addColumn('task_id', 'text', (c) => c.primaryKey())
          .addColumn('state', 'text', (c) => c.notNull())
          .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
          .addColumn('lease_owner', 'text')
          .addColumn('lease_until', 'bigint', (c) => c.notNull().defaultTo(0))
          .addColumn('object_key', 'text', (c) => c.notNull())
          .addColumn('bytes', 'bigint', (c) => c.notNull().defaultTo(0))
          .addColumn('content_type', 'text', (c) => c.notNull().defaultTo('video/mp4'))
          .addColumn('stored_at', 'bigint', (c) => c.notNull().defaultTo(0))
          .addColumn('error', 'text', (c) => c.notNull().defaultTo(''))
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .execute();
        await db.schema.createIndex('task_archives_due').on('task_archives').columns(['state', 'next_attempt_at']).execute();
        await db.schema.createIndex('task_archives_stored').on('task_archives').columns(['state', 'stored_at']).execute();
      },
      async down(db: Kysely<any>) {
        await db.schema.dropTable('task_archives').ifExists().execute();
      },
    },
    // Provider callbacks: the unguessable token in the URL a provider calls back (null: the task's
    // provider does not call back, or server.public_url was unset when it was created).
    '0008b_task_callback_token': {
      async up(db: Kysely<any>) {
        await db.schema.alterTable('tasks').addColumn('callback_token', 'text').execute();
        await db.schema.createIndex('tasks_callback_token').unique().on('tasks').column('callback_token').execute();
      },
      async down(db: Kysely<any>) {
        await db.schema.dropIndex('tasks_callback_token').ifExists().execute();
        await db.schema.alterTable('tasks').dropColumn('callback_token').execute();
      },
    },
    // Completion webhooks: where a task reports to, each key's signing secret, and the durable
    // outbox of deliveries (at-least-once: a row stays pending until a 2xx, claimed with a lease).
    '0007c_webhooks': {
      async up(db: Kysely<any>) {
        await db.schema
          .createTable('task_callbacks')
          .addColumn('task_id', 'text', (c) => c.primaryKey())
          .addColumn('url', 'text', (c) => c.notNull())
          .addColumn('events', 'text', (c) => c.notNull())
          .execute();
        await db.schema
          .createTable('webhook_secrets')
          .addColumn('key_id', 'text', (c) => c.primaryKey())
          .addColumn('secret', 'text', (c) => c.notNull())
          // After a rotation the previous secret still signs (a second signature) until previous_until.
          .addColumn('previous_secret', 'text')
          .addColumn('previous_until', 'bigint', (c) => c.notNull().defaultTo(0))
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .execute();
        await db.schema
          .createTable('webhook_outbox')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('task_id', 'text', (c) => c.notNull())
          .addColumn('key_id', 'text', (c) => c.notNull())
          .addColumn('url', 'text', (c) => c.notNull())
          .addColumn('event', 'text', (c) => c.notNull())
          .addColumn('payload', 'text', (c) => c.notNull())
          .addColumn('state', 'text', (c) => c.notNull())
          .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
          .addColumn('lease_owner', 'text')
          .addColumn('lease_until', 'bigint', (c) => c.notNull().defaultTo(0))
          .addColumn('last_status', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('last_error', 'text', (c) => c.notNull().defaultTo(''))
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addColumn('delivered_at', 'bigint', (c) => c.notNull().defaultTo(0))
          .execute();
        await db.schema.createIndex('webhook_outbox_due').on('webhook_outbox').columns(['state', 'next_attempt_at']).execute();
        await db.schema.createIndex('webhook_outbox_task').on('webhook_outbox').columns(['task_id']).execute();
      },
      async down(db: Kysely<any>) {
        await db.schema.dropTable('webhook_outbox').ifExists().execute();
        await db.schema.dropTable('webhook_secrets').ifExists().execute();
        await db.schema.dropTable('task_callbacks').ifExists().execute();
      },
    },
    // Responses API state: each stored response (its object and its whole input) per key, and every
    // item it introduced by id, for previous_response_id and item_reference. Rows past expires_at
    // are invisible and swept.
    '0006_responses': {
      async up(db: Kysely<any>) {
        await db.schema
          .createTable('responses')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('key_id', 'text', (c) => c.notNull())
          .addColumn('model', 'text', (c) => c.notNull())
          .addColumn('body', 'text', (c) => c.notNull())
          .addColumn('input_items', 'text', (c) => c.notNull())
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addColumn('expires_at', 'bigint', (c) => c.notNull())
          .execute();
        await db.schema.createIndex('responses_expires').on('responses').column('expires_at').execute();
        await db.schema
          .createTable('response_items')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('key_id', 'text', (c) => c.notNull())
          .addColumn('response_id', 'text', (c) => c.notNull())
          .addColumn('body', 'text', (c) => c.notNull())
          .addColumn('expires_at', 'bigint', (c) => c.notNull())
          .execute();
        await db.schema.createIndex('response_items_response').on('response_items').column('response_id').execute();
        await db.schema.createIndex('response_items_expires').on('response_items').column('expires_at').execute();
      },
      async down(db: Kysely<any>) {
        for (const t of ['response_items', 'responses']) await db.schema.dropTable(t).ifExists().execute();
      },
    },
    // The Videos API (/v1/videos): a deleted task is hidden from every client API (deleted_at > 0)
    // but kept for the ledger and the operators; video_meta is what the video object shows that the
    // provider's task object does not reliably hold (prompt, seconds, size), JSON, '' for older tasks.
    '0008a_task_deleted': {
      async up(db: Kysely<any>) {
        await db.schema.alterTable('tasks').addColumn('deleted_at', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
        await db.schema.alterTable('tasks').addColumn('video_meta', 'text', (c) => c.notNull().defaultTo('')).execute();
      },
      async down(db: Kysely<any>) {
        await db.schema.alterTable('tasks').dropColumn('video_meta').execute();
        await db.schema.alterTable('tasks').dropColumn('deleted_at').execute();
      },
    },
    // The poller's crash-recovery sweep (finished tasks whose hold is still open) and the
    // abandoned-hold sweep start from the held reservations, not from the tasks: a partial index of
    // only the held ones (a closed hold leaves it, so it stays as small as what is in flight;
    // covering: when and which), and the tasks looked up by their reservation. Queries must say
    // `state = 'held'` as a literal for either database to use the partial index.
    '0009b_task_hold_sweep_index': {
      async up(db: Kysely<any>) {
        await db.schema.createIndex('reservations_held').on('reservations').columns(['created_at', 'id']).where(sql.ref('state'), '=', 'held').execute();
        await db.schema.createIndex('tasks_reservation').on('tasks').column('reservation_id').execute();
      },
      async down(db: Kysely<any>) {
        await db.schema.dropIndex('tasks_reservation').ifExists().execute();
        await db.schema.dropIndex('reservations_held').ifExists().execute();
      },
    },
    // Responses state as a chain: a response points to the one it continues (parent_id) and keeps
    // only its own input, so a conversation is stored once; its sizes (context_bytes, bytes) let a
    // request's expansion and a key's total be counted without reading bodies. Item ids become unique per key instead of
    // globally (one key's id no longer hides another's), and an item lives with the response that
    // stored it last. Existing responses keep their whole input and read as conversation starts.
    '0010_responses_chain': {
      async up(db: Kysely<any>) {
        const size = (col: string) => (dialect === 'postgres' ? sql`octet_length(${sql.ref(col)})` : sql`length(cast(${sql.ref(col)} as blob))`);
        await db.schema.alterTable('responses').addColumn('parent_id', 'text').execute();
        await db.schema.alterTable('responses').addColumn('depth', 'integer', (c) => c.notNull().defaultTo(0)).execute();
        await db.schema.alterTable('responses').addColumn('bytes', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
        await db.schema.alterTable('responses').addColumn('context_bytes', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
        // An existing body is counted whole as context: at most a few echoed request fields too many.
        await db.updateTable('responses').set({ bytes: sql`${size('input_items')} + ${size('body')}` }).execute();
        await db.updateTable('responses').set({ context_bytes: sql.ref('bytes') }).execute();
        // A key's count and bytes, and its eviction order, from the index alone.
        await db.schema.createIndex('responses_key_age').on('responses').columns(['key_id', 'expires_at', 'depth', 'bytes']).execute();

        await db.schema
          .createTable('response_items_by_key')
          .addColumn('key_id', 'text', (c) => c.notNull())
          .addColumn('id', 'text', (c) => c.notNull())
          .addColumn('response_id', 'text', (c) => c.notNull())
          .addColumn('body', 'text', (c) => c.notNull())
          .addColumn('bytes', 'bigint', (c) => c.notNull())
          .addPrimaryKeyConstraint('response_items_by_key_pk', ['key_id', 'id'])
          .execute();
        await db
          .insertInto('response_items_by_key')
          .columns(['key_id', 'id', 'response_id', 'body', 'bytes'])
          .expression(
            db
              .selectFrom('response_items as i')
              .select(['i.key_id', 'i.id', 'i.response_id', 'i.body', size('i.body').as('bytes')])
              .where((eb) => eb.exists(eb.selectFrom('responses as r').select('r.id').whereRef('r.id', '=', 'i.response_id').whereRef('r.key_id', '=', 'i.key_id'))),
          )
          .execute();
        await db.schema.dropTable('response_items').execute();
        await db.schema.alterTable('response_items_by_key').renameTo('response_items').execute();
        await db.schema.createIndex('response_items_response').on('response_items').column('response_id').execute();
      },
      async down(db: Kysely<any>) {
        await db.schema
          .createTable('response_items_global')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('key_id', 'text', (c) => c.notNull())
          .addColumn('response_id', 'text', (c) => c.notNull())
          .addColumn('body', 'text', (c) => c.notNull())
          .addColumn('expires_at', 'bigint', (c) => c.notNull())
          .execute();
        // Ids two keys share cannot both return to a global key: the first one stays. A chained
        // response keeps only its own turn's input.
        const rows = await db.selectFrom('response_items as i').innerJoin('responses as r', 'r.id', 'i.response_id').select(['i.id', 'i.key_id', 'i.response_id', 'i.body', 'r.expires_at']).execute();
        const seen = new Set<string>();
        for (const row of rows) {
          if (seen.has(row.id)) continue;
          seen.add(row.id);
          await db.insertInto('response_items_global').values(row).execute();
        }
        await db.schema.dropTable('response_items').execute();
        await db.schema.alterTable('response_items_global').renameTo('response_items').execute();
        await db.schema.createIndex('response_items_response').on('response_items').column('response_id').execute();
        await db.schema.createIndex('response_items_expires').on('response_items').column('expires_at').execute();
        await db.schema.dropIndex('responses_key_age').execute();
        for (const c of ['context_bytes', 'bytes', 'depth', 'parent_id']) await db.schema.alterTable('responses').dropColumn(c).execute();
      },
    },
    '0011_projects_budgets': {
      async up(db: Kysely<any>) {
        await db.schema
          .createTable('projects')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('name', 'text', (c) => c.notNull().unique())
          .addColumn('price_ratio', 'double precision')
          .addColumn('budget_micros', 'bigint')
          .addColumn('budget_period', 'text')
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addColumn('updated_at', 'bigint', (c) => c.notNull())
          .execute();
        await db.schema.alterTable('api_keys').addColumn('project_id', 'text').execute();
        await db.schema.alterTable('api_keys').addColumn('budget_micros', 'bigint').execute();
        await db.schema.alterTable('api_keys').addColumn('budget_period', 'text').execute();
        // The budget windows a hold counts against (JSON), closed with it in one transaction.
        await db.schema.alterTable('reservations').addColumn('budget', 'text').execute();
        await db.schema
          .createTable('budget_windows')
          .addColumn('scope', 'text', (c) => c.notNull())
          .addColumn('window_start', 'bigint', (c) => c.notNull())
          .addColumn('window_end', 'bigint', (c) => c.notNull())
          .addColumn('limit_micros', 'bigint', (c) => c.notNull())
          .addColumn('spent_micros', 'bigint', (c) => c.notNull().defaultTo(0))
          .addColumn('held_micros', 'bigint', (c) => c.notNull().defaultTo(0))
          .addColumn('alerted', 'integer', (c) => c.notNull().defaultTo(0))
          .addPrimaryKeyConstraint('budget_windows_pk', ['scope', 'window_start'])
          .execute();
      },
      async down(db: Kysely<any>) {
        await db.schema.dropTable('budget_windows').execute();
        await db.schema.alterTable('reservations').dropColumn('budget').execute();
        for (const c of ['budget_period', 'budget_micros', 'project_id']) await db.schema.alterTable('api_keys').dropColumn(c).execute();
        await db.schema.dropTable('projects').execute();
      },
    },
    // What each usage row was billed by: unit, quantity, rate and the price factors applied.
    '0012_usage_billed_by': {
      async up(db: Kysely<any>) {
        await db.schema.alterTable('usage').addColumn('billed_by', 'text', (c) => c.notNull().defaultTo('')).execute();
      },
      async down(db: Kysely<any>) {
        await db.schema.alterTable('usage').dropColumn('billed_by').execute();
      },
    },
    // A ledger row's error: the message its client was answered with (empty for a success).
    '0016_console': {
      async up(db: Kysely<any>) {
        await db.schema.alterTable('usage').addColumn('error', 'text', (c) => c.notNull().defaultTo('')).execute();
      },
      async down(db: Kysely<any>) {
        await db.schema.alterTable('usage').dropColumn('error').execute();
      },
    },
    // Observability: the searchable request logs (time, trace id, key), and a video task's own
    // trace (the traceparent of its create span), so its polls and callbacks join it on any
    // instance and after a restart.
    '0014_request_logs': {
      async up(db: Kysely<any>) {
        const logs = db.schema.createTable('request_logs');
        await (dialect === 'postgres' ? logs.addColumn('id', 'bigserial', (c) => c.primaryKey()) : logs.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement()))
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addColumn('trace_id', 'text', (c) => c.notNull())
          .addColumn('key_id', 'text', (c) => c.notNull())
          .addColumn('model', 'text', (c) => c.notNull())
          .addColumn('channel', 'text', (c) => c.notNull())
          .addColumn('endpoint', 'text', (c) => c.notNull())
          .addColumn('route', 'text', (c) => c.notNull())
          .addColumn('status', 'integer', (c) => c.notNull())
          .addColumn('latency_ms', 'integer', (c) => c.notNull())
          .addColumn('input_units', 'bigint', (c) => c.notNull().defaultTo(0))
          .addColumn('output_units', 'bigint', (c) => c.notNull().defaultTo(0))
          .addColumn('cost_micros', 'bigint', (c) => c.notNull().defaultTo(0))
          .addColumn('request_body', 'text', (c) => c.notNull().defaultTo(''))
          .addColumn('response_body', 'text', (c) => c.notNull().defaultTo(''))
          .execute();
        await db.schema.createIndex('request_logs_time').on('request_logs').columns(['created_at', 'id']).execute();
        await db.schema.createIndex('request_logs_key_time').on('request_logs').columns(['key_id', 'created_at']).execute();
        await db.schema.createIndex('request_logs_trace').on('request_logs').column('trace_id').execute();
        await db.schema.alterTable('tasks').addColumn('trace_parent', 'text', (c) => c.notNull().defaultTo('')).execute();
      },
      async down(db: Kysely<any>) {
        await db.schema.alterTable('tasks').dropColumn('trace_parent').execute();
        await db.schema.dropTable('request_logs').ifExists().execute();
      },
    },
    // Idempotency-Key: one row per (key, Idempotency-Key), claimed by the primary key's uniqueness,
    // so two instances never both run the same request; the first answer is kept until expires_at.
    '0013_idempotency': {
      async up(db: Kysely<any>) {
        await db.schema
          .createTable('idempotency_keys')
          .addColumn('key_id', 'text', (c) => c.notNull())
          .addColumn('idem_key', 'text', (c) => c.notNull())
          .addColumn('fingerprint', 'text', (c) => c.notNull())
          .addColumn('owner', 'text', (c) => c.notNull())
          .addColumn('state', 'text', (c) => c.notNull())
          .addColumn('lease_until', 'bigint', (c) => c.notNull())
          .addColumn('status', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('headers', 'text', (c) => c.notNull().defaultTo(''))
          .addColumn('body', dialect === 'postgres' ? 'bytea' : 'blob')
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addColumn('expires_at', 'bigint', (c) => c.notNull())
          .addPrimaryKeyConstraint('idempotency_keys_pk', ['key_id', 'idem_key'])
          .execute();
        await db.schema.createIndex('idempotency_keys_expires').on('idempotency_keys').column('expires_at').execute();
      },
      async down(db: Kysely<any>) {
        await db.schema.dropTable('idempotency_keys').ifExists().execute();
      },
    },
    // Channels added at runtime, and the enabled switch of config-file channels.
    '0015_channels': {
      async up(db: Kysely<any>) {
        await db.schema
          .createTable('channels')
          .addColumn('name', 'text', (c) => c.primaryKey())
          .addColumn('kind', 'text', (c) => c.notNull())
          .addColumn('body', 'text', (c) => c.notNull())
          .addColumn('credentials', 'text')
          .addColumn('enabled', 'integer', (c) => c.notNull())
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addColumn('updated_at', 'bigint', (c) => c.notNull())
          .addColumn('deleted_at', 'bigint', (c) => c.notNull().defaultTo(0))
          .execute();
      },
      async down(db: Kysely<any>) {
        await db.schema.dropTable('channels').execute();
      },
    },
    // Queued image requests whose client stopped waiting: the provider tasks and the credit hold,
    // followed to their end by the image-wait worker (claimed with a lease, like the outbox).
    '0017_image_waits': {
      async up(db: Kysely<any>) {
        await db.schema
          .createTable('image_waits')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('key_id', 'text', (c) => c.notNull())
          .addColumn('model', 'text', (c) => c.notNull())
          .addColumn('channel', 'text', (c) => c.notNull())
          .addColumn('endpoint', 'text', (c) => c.notNull())
          .addColumn('status', 'integer', (c) => c.notNull())
          .addColumn('error', 'text', (c) => c.notNull().defaultTo(''))
          .addColumn('input_units', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('started_at', 'bigint', (c) => c.notNull())
          .addColumn('reservation_id', 'text')
          .addColumn('units', 'text', (c) => c.notNull())
          .addColumn('tasks', 'text', (c) => c.notNull())
          .addColumn('state', 'text', (c) => c.notNull())
          .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
          .addColumn('lease_owner', 'text')
          .addColumn('lease_until', 'bigint', (c) => c.notNull().defaultTo(0))
          .addColumn('expires_at', 'bigint', (c) => c.notNull())
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .execute();
        await db.schema.createIndex('image_waits_due').on('image_waits').columns(['state', 'next_attempt_at']).execute();
        await db.schema.createIndex('image_waits_reservation').on('image_waits').column('reservation_id').execute();
      },
      async down(db: Kysely<any>) {
        await db.schema.dropTable('image_waits').ifExists().execute();
      },
    },
    // Budget leases: the part of a budget window's room one instance holds in memory for its
    // requests (counted in the window's held_micros); an expired row goes back to the window.
    '0018_budget_leases': {
      async up(db: Kysely<any>) {
        await db.schema
          .createTable('budget_leases')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('scope', 'text', (c) => c.notNull())
          .addColumn('window_start', 'bigint', (c) => c.notNull())
          .addColumn('instance', 'text', (c) => c.notNull())
          .addColumn('amount_micros', 'bigint', (c) => c.notNull())
          .addColumn('expires_at', 'bigint', (c) => c.notNull())
          .execute();
        await db.schema.createIndex('budget_leases_expiry').on('budget_leases').column('expires_at').execute();
      },
      async down(db: Kysely<any>) {
        await db.schema.dropTable('budget_leases').ifExists().execute();
      },
    },
  };
}

export async function migrateToLatest(db: Kysely<any>, dialect: Dialect): Promise<string[]> {
  const provider: MigrationProvider = { getMigrations: async () => migrations(dialect) };
  const run = async (conn: Kysely<any>) => {
    // Migrations are numbered per feature and written side by side, so a database may have run a
    // higher number before a lower one lands; each touches its own tables, so order is not needed.
    const { error, results } = await new Migrator({ db: conn, provider, allowUnorderedMigrations: true }).migrateToLatest();
    if (error) throw error instanceof Error ? error : new Error(String(error));
    return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
  };
  if (dialect !== 'postgres') return run(db);
  // Several instances may start at once: serialize their migrations on one session's advisory lock.
  return db.connection().execute(async (conn) => {
    await sql`select pg_advisory_lock(7346113)`.execute(conn);
    try {
      return await run(conn);
    } finally {
      await sql`select pg_advisory_unlock(7346113)`.execute(conn);
    }
  });
}
