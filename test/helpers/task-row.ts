import type { TaskRow } from '../../src/store/repos/tasks.js';

/**
 * A whole tasks row for seeding the store directly (list and read tests): an open simulator task
 * of `keyId` with no hold, lease or URL; `over` sets whatever the test is about.
 */
export function taskRow(keyId: string, over: Partial<TaskRow> & { task_id: string }): TaskRow {
  const now = Date.now();
  return {
    upstream_id: over.task_id,
    key_id: keyId,
    model: 'sim-video',
    channel: 'simulator',
    upstream_model: 'sim-video',
    action: 'textGenerate',
    status: 'IN_PROGRESS',
    fail_reason: '',
    submit_time: Math.floor(now / 1000),
    start_time: 0,
    finish_time: 0,
    progress: '0%',
    data: JSON.stringify({ id: over.task_id }),
    reservation_id: null,
    estimated_units: 0,
    next_poll_at: now,
    lease_owner: null,
    lease_until: 0,
    poll_failures: 0,
    deadline_at: now + 3_600_000,
    url_expires_at: 0,
    updated_at: now,
    callback_token: null,
    deleted_at: 0,
    video_meta: '',
    trace_parent: '',
    billing: '',
    ...over,
  } as TaskRow;
}
