// Child processes of the bench: every server and every load generator runs in its own process,
// so the CPU and memory the kernel reports for a pid belong to that one program.
import { spawn, fork } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';

const live = new Set();

/**
 * Spawns `node <args>` and resolves once a line of its stdout matches `ready` (first capture =
 * its URL). Everything the child writes is kept (last 8 KB) for error messages.
 */
export function startServer(name, args, { env = {}, ready = /^LISTENING (\S+)/m, timeoutMs = 30_000 } = {}) {
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  let out = '';
  const keep = (chunk) => {
    out = (out + chunk.toString()).slice(-8192);
  };
  child.stderr.on('data', keep);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`${name} did not start within ${timeoutMs} ms:\n${out}`)), timeoutMs);
    const fail = (err) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(err);
    };
    child.stdout.on('data', (chunk) => {
      keep(chunk);
      const m = ready.exec(out);
      if (m && timer) {
        clearTimeout(timer);
        child.stdout.removeAllListeners('data');
        child.stdout.on('data', keep);
        resolve({
          name,
          url: m[1].replace('://localhost', '://127.0.0.1').replace(/\/$/, ''),
          pid: child.pid,
          child,
          output: () => out,
          stop: () => stopChild(child),
        });
      }
    });
    child.once('exit', (code, signal) => fail(new Error(`${name} exited (${code ?? signal}) before it was ready:\n${out}`)));
  });
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves when the child is gone. */
export function stopChild(child, graceMs = 5000) {
  if (child.exitCode !== null || child.signalCode !== null) {
    live.delete(child);
    return Promise.resolve();
  }
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      live.delete(child);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Kills whatever is still running (on errors and Ctrl-C). */
export function killAll() {
  for (const c of live) if (c.exitCode === null) c.kill('SIGKILL');
  live.clear();
}

/**
 * Runs a load-generator module (bench/lib/*-child.mjs) in a forked process with one job and
 * resolves with the one message it sends back.
 */
export function runJob(modulePath, job, { timeoutMs = 600_000 } = {}) {
  const child = fork(modulePath, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  live.add(child);
  return new Promise((resolve, reject) => {
    let result;
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('message', (m) => {
      result = m;
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      live.delete(child);
      if (result && !result.error) resolve(result);
      else reject(new Error(result?.error ?? `${modulePath} exited with ${code} and no result`));
    });
    child.send(job);
  });
}

// --- /proc readings (Linux) -------------------------------------------------------------------

const TICKS = 100; // USER_HZ; 100 on every Linux the bench targets (getconf CLK_TCK)

/** CPU seconds (user + system) the process has used so far. */
export function cpuSeconds(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name may hold spaces; fields count from the last ')'.
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / TICKS;
}

/** Resident memory now and its peak, MB. */
export function memory(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k) => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? NaN);
  return { rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 };
}

/** Resets the peak-RSS counter (VmHWM) so a phase reads its own peak; false when not allowed. */
export function resetPeak(pid) {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}
