import { Type, type Static } from '@sinclair/typebox';
import type { TaskRow } from '../store/repos/tasks.js';
import { progressOf } from './status.js';

// The TaskRecord (docs/video.md) and its envelope. The response schema lists exactly these fields,
// so the route's serializer drops anything else a row might carry (key, channel, reservation, lease…).

export const TaskRecordSchema = Type.Object(
  {
    task_id: Type.String(),
    action: Type.String(),
    status: Type.String(),
    fail_reason: Type.String(),
    submit_time: Type.Integer(),
    start_time: Type.Integer(),
    finish_time: Type.Integer(),
    progress: Type.String(),
    // The provider's task object, passed as the provider sent it.
    data: Type.Unknown(),
  },
  { additionalProperties: false },
);

export const TaskEnvelopeSchema = Type.Object(
  { code: Type.String(), message: Type.String(), data: TaskRecordSchema },
  { additionalProperties: false },
);

export type TaskRecord = Static<typeof TaskRecordSchema>;
export type TaskEnvelope = Static<typeof TaskEnvelopeSchema>;

function parseData(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return {};
  }
}

/** The columns a TaskRecord is made of. */
export type RecordColumns = Pick<TaskRow, 'task_id' | 'action' | 'status' | 'fail_reason' | 'submit_time' | 'start_time' | 'finish_time' | 'progress' | 'data' | 'upstream_id'>;

/**
 * The provider's object as the client sees it, with the public task id as `id` whatever the
 * provider calls its own id (Kling `task_id`, Veo `name`, Wan `output.task_id`; those stay as they
 * are beside it), so `task_id` equals `data.id` for every provider.
 */
function clientData(row: RecordColumns): Record<string, unknown> {
  const data = parseData(row.data);
  if (!data || typeof data !== 'object' || Array.isArray(data)) return { id: row.task_id };
  const object = data as Record<string, unknown>;
  return object.id === row.task_id ? object : { ...object, id: row.task_id };
}

export function toTaskRecord(row: RecordColumns, now = Date.now()): TaskRecord {
  return {
    task_id: row.task_id,
    action: row.action,
    status: row.status,
    fail_reason: row.fail_reason,
    submit_time: row.submit_time,
    start_time: row.start_time,
    finish_time: row.finish_time,
    progress: progressOf(row.status, row.start_time, Math.floor(now / 1000), row.progress),
    data: clientData(row),
  };
}

export function envelope(record: TaskRecord): TaskEnvelope {
  return { code: 'success', message: '', data: record };
}
