import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

export const MAIN = join(__dirname, '..', '..', 'dist', 'main.js');

/** A `mediagate serve` child process (the compiled dist/) on a loopback port 0. */
export interface GatewayProcess {
  url: string;
  proc: ChildProcess;
  /** Everything it wrote to stderr so far (warnings, errors). */
  stderr(): string;
  /** Everything it wrote to stdout so far (the banner, the first key). */
  stdout(): string;
  /** Ends it: SIGTERM (graceful), SIGKILL if it is still running after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
  /** Resolves when the process has exited (whatever ended it). */
  exited: Promise<void>;
}

/** Environment of a child: the given config file, port 0, and no overrides leaking from the test's environment. */
function childEnv(configPath: string, extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, MEDIAGATE_CONFIG: configPath, PORT: '0', LOG_LEVEL: 'warn', ...extra };
  for (const k of ['DATABASE_URL', 'REDIS_URL', 'HOST', 'OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'ARK_API_KEY']) delete env[k];
  return env;
}

/** Starts `node dist/main.js serve` and waits for its "mediagate listening on http://…" line. */
export function spawnGateway(configPath: string, extraEnv: Record<string, string> = {}, timeoutMs = 25_000, cwd?: string): Promise<GatewayProcess> {
  const proc = spawn(process.execPath, [MAIN, 'serve'], { cwd, env: childEnv(configPath, extraEnv), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(`no "listening" line within ${timeoutMs} ms`), timeoutMs);
    function fail(why: string) {
      clearTimeout(timer);
      proc.kill('SIGKILL');
      reject(new Error(`mediagate serve: ${why}\nstdout: ${out}\nstderr: ${err}`));
    }
    proc.stderr!.on('data', (c: Buffer) => (err += String(c)));
    proc.stdout!.on('data', (c: Buffer) => {
      out += String(c);
      const m = /mediagate listening on (http:\/\/[^\s]+)/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      resolve({
        url: m[1].replace('://0.0.0.0', '://127.0.0.1'),
        proc,
        stderr: () => err,
        stdout: () => out,
        exited,
        async stop(graceMs = 5000) {
          if (proc.exitCode !== null || proc.signalCode !== null) return;
          proc.kill('SIGTERM');
          const t = setTimeout(() => proc.kill('SIGKILL'), graceMs);
          await exited;
          clearTimeout(t);
        },
      });
    });
    proc.once('exit', (code, signal) => fail(`exited before listening (code ${code}, signal ${signal})`));
  });
}

/** Runs the CLI without blocking this process (the simulator may live here); resolves with its outcome. */
export function runCli(configPath: string, args: string[], timeoutMs = 20_000): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const proc = spawn(process.execPath, [MAIN, ...args], { env: childEnv(configPath, {}), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  proc.stdout!.on('data', (c: Buffer) => (stdout += String(c)));
  proc.stderr!.on('data', (c: Buffer) => (stderr += String(c)));
  const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
  return new Promise((resolve) =>
    proc.once('exit', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    }),
  );
}
