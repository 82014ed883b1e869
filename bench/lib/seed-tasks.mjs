// Fills the bench database's tasks table straight through SQLite: clones of one real task row
// (created through the API and finished by the poller), one prepared INSERT, batches of 50,000
// rows per transaction. Clones are terminal (SUCCESS) so the poller leaves them alone.
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

/** Ark-shaped id of the i-th seeded task: cgt-20250101000000-xxxxx (36^5 ids). */
export function seededTaskId(i) {
  let s = '';
  for (let k = 0, n = i; k < 5; k++, n = Math.floor(n / 36)) s = ALPHABET[n % 36] + s;
  return `cgt-20250101000000-${s}`;
}

/** Adds clones until the table holds `total` seeded rows; returns { rows, seconds }. */
export function seedTasks(dbPath, templateId, from, total) {
  const db = new Database(dbPath);
  db.pragma('busy_timeout = 30000');
  try {
    const template = db.prepare('SELECT * FROM tasks WHERE task_id = ?').get(templateId);
    if (!template) throw new Error(`template task ${templateId} is not in the database`);
    const cols = Object.keys(template);
    const insert = db.prepare(`INSERT INTO tasks (${cols.join(', ')}) VALUES (${cols.map((c) => '@' + c).join(', ')})`);
    const batch = db.transaction((start, end) => {
      const row = { ...template, lease_owner: null, lease_until: 0 };
      for (let i = start; i < end; i++) {
        const id = seededTaskId(i);
        row.task_id = id;
        row.data = template.data.split(templateId).join(id);
        insert.run(row);
      }
    });
    const t0 = performance.now();
    for (let i = from; i < total; i += 50_000) batch(i, Math.min(total, i + 50_000));
    return { rows: total - from, seconds: (performance.now() - t0) / 1000 };
  } finally {
    db.close();
  }
}

/** `count` ids spread evenly over the first `total` seeded tasks. */
export function sampleIds(total, count) {
  const n = Math.min(total, count);
  return Array.from({ length: n }, (_, k) => seededTaskId(Math.floor((k * total) / n)));
}

/**
 * Adds open tasks for the poller: clones of an open task row (created through the API), one per
 * id the simulator handed out, due over the next `spreadMs` as a steady stream of polls would be.
 */
export function seedOpenTasks(dbPath, templateId, ids, spreadMs) {
  const db = new Database(dbPath);
  db.pragma('busy_timeout = 30000');
  try {
    const template = db.prepare('SELECT * FROM tasks WHERE task_id = ?').get(templateId);
    if (!template) throw new Error(`open template task ${templateId} is not in the database`);
    const cols = Object.keys(template);
    const insert = db.prepare(`INSERT INTO tasks (${cols.join(', ')}) VALUES (${cols.map((c) => '@' + c).join(', ')})`);
    const now = Date.now();
    db.transaction(() => {
      ids.forEach((id, i) => {
        insert.run({
          ...template,
          task_id: id,
          // Each clone is its own task at the provider (polled by this id).
          upstream_id: id,
          data: template.data.split(templateId).join(id),
          lease_owner: null,
          lease_until: 0,
          poll_failures: 0,
          next_poll_at: now + Math.floor((i / ids.length) * spreadMs),
        });
      });
    })();
  } finally {
    db.close();
  }
}
