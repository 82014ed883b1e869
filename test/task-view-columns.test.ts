import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabaseUrl, testDialect } from './helpers/databases.js';
import { openStore, type Store } from '../src/store/db.js';
import { TasksRepo, VIEW_COLUMNS, normalizeTask, type NewTaskRow } from '../src/store/repos/tasks.js';

// On SQLite a client's task read takes its row from the query-only connection as an array of values
// and builds the view from their positions: those must stay in VIEW_COLUMNS' order (the SQL is built
// from that list). A view read that way must equal the same columns read by name.
describe.skipIf(testDialect() !== 'sqlite')('the task view read as values', () => {
  let db: Awaited<ReturnType<typeof freshDatabaseUrl>>;
  let store: Store;

  beforeAll(async () => {
    db = await freshDatabaseUrl();
    store = await openStore(db.url);
  });
  afterAll(async () => {
    await store.close();
    await db.drop();
  });

  it('gives every shown column its own value', async () => {
    const repo = new TasksRepo(store.db, store.dialect, store.readRaw);
    // Every shown column holds a value no other column holds.
    const row: NewTaskRow = {
      task_id: 'cgt-20250101000000-views',
      upstream_id: 'upstream-views',
      billing: '',
      key_id: 'key_views',
      model: 'sim-video',
      channel: 'simulator',
      upstream_model: 'sim-video',
      action: 'textGenerate',
      status: 'SUCCESS',
      fail_reason: 'https://example.com/video.mp4',
      submit_time: 1_700_000_001,
      start_time: 1_700_000_002,
      finish_time: 1_700_000_003,
      progress: '100%',
      data: '{"id":"upstream-views"}',
      reservation_id: null,
      estimated_units: 0,
      next_poll_at: 0,
      lease_owner: null,
      lease_until: 0,
      poll_failures: 0,
      deadline_at: 0,
      url_expires_at: 1_700_000_004_000,
      callback_token: null,
      updated_at: 1,
    };
    await repo.insert(row);
    await store.db.updateTable('tasks').set({ deleted_at: 1_700_000_005_000 }).where('task_id', '=', row.task_id).execute();
    const byName = normalizeTask((await store.db.selectFrom('tasks').select([...VIEW_COLUMNS]).where('task_id', '=', row.task_id).executeTakeFirstOrThrow()) as Record<string, unknown>);
    const view = await repo.view(row.task_id);
    expect(view).toEqual(byName);
    expect(new Set(Object.values(byName)).size).toBe(VIEW_COLUMNS.length);
  });
});
