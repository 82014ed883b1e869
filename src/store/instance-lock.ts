import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname } from 'node:path';

// One SQLite file belongs to one serving process. Two processes on one file would each run their
// own poller and embedded simulator, and fail each other's video tasks; the only supported way to
// run several instances is PostgreSQL (docs/deployment.md). The lock is a file next to the
// database, created exclusively, holding the owner's pid and host. A lock whose process is gone
// (same host, pid not running, or our own pid after a container restart) is stale and taken over.
// CLI commands (keys, usage, migrate) do not take the lock: they may run beside the server.

export class InstanceLockError extends Error {}

export interface InstanceLock {
  path: string;
  release(): void;
}

interface Owner {
  pid: number;
  host: string;
  started: string;
}

function readOwner(path: string): Owner | null {
  try {
    const o = JSON.parse(readFileSync(path, 'utf8')) as Partial<Owner>;
    return typeof o.pid === 'number' && typeof o.host === 'string' ? { pid: o.pid, host: o.host, started: String(o.started ?? '') } : null;
  } catch {
    return null;
  }
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function isStale(owner: Owner | null): boolean {
  // An unreadable or half-written file is a lock whose writer died between open and write.
  if (!owner) return true;
  if (owner.host !== hostname()) return false;
  return owner.pid === process.pid || !running(owner.pid);
}

/** Takes the lock of the SQLite database at `dbPath`; throws InstanceLockError naming the owner. */
export function acquireInstanceLock(dbPath: string): InstanceLock {
  const path = `${dbPath}.lock`;
  mkdirSync(dirname(path), { recursive: true });
  for (let attempt = 0; attempt < 3; attempt++) {
    let fd: number;
    try {
      fd = openSync(path, 'wx', 0o644);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const owner = readOwner(path);
      if (!isStale(owner)) {
        throw new InstanceLockError(
          `another mediagate process (pid ${owner!.pid} on ${owner!.host}, started ${owner!.started}) is serving the SQLite database ${dbPath}. ` +
            `One SQLite file serves one process: stop that one first, or give this one its own database (DATABASE_URL=sqlite:./other.db). ` +
            `To run several instances on one database, use PostgreSQL (docs/deployment.md). ` +
            `If no such process runs, delete ${path}.`,
        );
      }
      try {
        unlinkSync(path);
      } catch {
        // Another starter removed it first; the next attempt decides.
      }
      continue;
    }
    writeSync(fd, JSON.stringify({ pid: process.pid, host: hostname(), started: new Date().toISOString() }));
    closeSync(fd);
    let held = true;
    const release = () => {
      if (!held) return;
      held = false;
      // Only our own lock: a stale-lock takeover by another process must not be undone.
      if (readOwner(path)?.pid === process.pid) {
        try {
          unlinkSync(path);
        } catch {
          // Already gone.
        }
      }
    };
    process.once('exit', release);
    return { path, release };
  }
  throw new InstanceLockError(`could not take the lock ${path}; another mediagate process is starting on the same database`);
}
