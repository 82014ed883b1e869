import type { MoveExtras, TaskRow } from '../store/repos/tasks.js';

/**
 * What else happens when a task changes status. `extrasFor` names rows to write in the same
 * transaction as the move (an archive copy, webhook deliveries), so the work is recorded exactly
 * when the move is; `moved` is told afterwards, once, by the caller whose move won (logs, metrics,
 * waking the workers).
 */
export interface MoveHooks {
  extrasFor(before: TaskRow, after: TaskRow, now: number): Promise<MoveExtras | undefined>;
  moved(before: TaskRow, after: TaskRow, now: number): void;
}

/** Several hooks as one: their extras merged, each told of every move. */
export function combineHooks(hooks: MoveHooks[]): MoveHooks {
  return {
    async extrasFor(before, after, now) {
      const out: MoveExtras = {};
      for (const h of hooks) {
        const e = await h.extrasFor(before, after, now);
        if (e?.archive) out.archive = e.archive;
        if (e?.outbox?.length) out.outbox = [...(out.outbox ?? []), ...e.outbox];
      }
      return out.archive || out.outbox ? out : undefined;
    },
    moved(before, after, now) {
      for (const h of hooks) h.moved(before, after, now);
    },
  };
}
