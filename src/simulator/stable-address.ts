import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { startSimulator, type Simulator } from './server.js';
import type { SimOptions } from './router.js';

// Finished simulator tasks keep their video URL (in `fail_reason` and `data`), which names the
// simulator's port and carries its signature. An embedded simulator on port 0 would get a new
// port and secret on every start, so every URL handed out before a restart would stop working.
// The embedded simulator of a SQLite deployment therefore keeps both in a small JSON file next to
// the database, reuses them at the next start, and falls back to a fresh port only when the old
// one is taken (then the file records the new one). Its video tasks are kept in a second file
// beside it (`…simulator-tasks.json`, video-common.ts), so a task open at shutdown finishes after
// the restart as it would have at the provider.

interface SavedState {
  port: number;
  secret: string;
}

function readState(file: string): SavedState | null {
  try {
    const s = JSON.parse(readFileSync(file, 'utf8')) as Partial<SavedState>;
    const portOk = Number.isInteger(s.port) && s.port! > 0 && s.port! < 65536;
    const secretOk = typeof s.secret === 'string' && /^[0-9a-f]{64}$/.test(s.secret);
    return portOk && secretOk ? { port: s.port!, secret: s.secret! } : null;
  } catch {
    return null;
  }
}

/** Starts the simulator on the port and secret saved in `file` (if any), and saves what it got. */
export async function startStableSimulator(file: string, opts: Partial<SimOptions> & { host?: string }): Promise<Simulator> {
  const saved = readState(file);
  const secret = saved ? Buffer.from(saved.secret, 'hex') : randomBytes(32);
  const tasksFile = `${file.replace(/\.json$/, '')}-tasks.json`;
  let sim: Simulator;
  try {
    sim = await startSimulator({ ...opts, port: saved?.port ?? 0, signingSecret: secret, tasksFile });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' && (err as NodeJS.ErrnoException).code !== 'EACCES') throw err;
    sim = await startSimulator({ ...opts, port: 0, signingSecret: secret, tasksFile });
  }
  if (!saved || sim.port !== saved.port) writeFileSync(file, JSON.stringify({ port: sim.port, secret: secret.toString('hex') }) + '\n', { mode: 0o600 });
  return sim;
}
