import { afterAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { interpolate, loadConfig } from '../src/config-file/loader.js';
import { tempDir } from './helpers/gateway.js';
import { testDialect } from './helpers/databases.js';

// The Dockerfile and compose.yaml (no container engine runs here): their structure — stages, a
// non-root user, the healthcheck, production dependencies only, the services of the documented
// deployment and their environment — and the image's start command run on the host against a
// temporary config, answering /readyz, with the image's healthcheck command passing against it.

const ROOT = join(__dirname, '..');

interface Instruction {
  op: string;
  args: string;
}

/** Dockerfile instructions, continuation lines joined and comments dropped. */
function instructions(text: string): Instruction[] {
  const joined = text.replace(/\\\n/g, ' ');
  return joined
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => {
      const m = /^(\w+)\s+(.*)$/.exec(l)!;
      return { op: m[1].toUpperCase(), args: m[2].trim() };
    });
}

/** The instructions of each stage, by stage name. */
function stages(list: Instruction[]): Map<string, Instruction[]> {
  const out = new Map<string, Instruction[]>();
  let current: Instruction[] = [];
  for (const i of list) {
    if (i.op === 'FROM') {
      current = [i];
      out.set(/\bAS\s+(\S+)/i.exec(i.args)?.[1] ?? `stage${out.size}`, current);
    } else current.push(i);
  }
  return out;
}

const DOCKERFILE = stages(instructions(readFileSync(join(ROOT, 'Dockerfile'), 'utf8')));
const runtime = [...DOCKERFILE.values()].at(-1)!;
const arg = (op: string) => runtime.filter((i) => i.op === op).map((i) => i.args);
/** ENV of the runtime stage (`ENV A=1 B=2`). */
const imageEnv = Object.fromEntries(arg('ENV').flatMap((a) => [...a.matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1], m[2]])));
/** An exec-form command (`["node", …]`). */
const execForm = (args: string) => JSON.parse(args.replace(/^(?:--\S+\s+)*CMD\s+/, '')) as string[];

describe('the Dockerfile', () => {
  it('builds in one stage and runs in another, with production dependencies and the built dist only', () => {
    expect([...DOCKERFILE.keys()]).toEqual(['build', 'runtime']);
    const build = DOCKERFILE.get('build')!;
    for (const stage of DOCKERFILE.values()) expect(stage[0].args).toMatch(/^node:20[.-]/);
    expect(build.some((i) => i.op === 'RUN' && /\bnpm ci\b(?!.*--omit)/.test(i.args))).toBe(true);
    expect(build.some((i) => i.op === 'RUN' && /\bnpm run build\b/.test(i.args))).toBe(true);
    expect(arg('RUN').some((a) => /\bnpm ci --omit=dev\b/.test(a))).toBe(true);
    expect(arg('COPY')).toContain('--from=build /app/dist ./dist');
    // Nothing of the sources or the dev tooling reaches the runtime stage.
    expect(arg('COPY').filter((a) => /\bsrc\b|node_modules/.test(a))).toEqual([]);
  });

  it('runs as a user that is not root, with a healthcheck on /readyz', () => {
    const user = arg('USER');
    expect(user).toHaveLength(1);
    expect(user[0]).not.toMatch(/^(root|0)(:|$)/);
    const health = arg('HEALTHCHECK');
    expect(health).toHaveLength(1);
    expect(health[0]).toMatch(/--interval=\d+s/);
    expect(execForm(health[0]).join(' ')).toContain('/readyz');
    expect(execForm(arg('CMD')[0])).toEqual(['node', 'dist/main.js', 'serve']);
    expect(imageEnv).toMatchObject({ NODE_ENV: 'production', HOST: '0.0.0.0', PORT: '8080' });
  });

  it('leaves dependencies, builds and local data out of the build context', () => {
    const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n');
    for (const p of ['node_modules', 'dist', 'data', '.git']) expect(ignored).toContain(p);
  });
});

describe('compose.yaml', () => {
  const compose = parse(readFileSync(join(ROOT, 'compose.yaml'), 'utf8'), { merge: true }) as any;
  const services = compose.services as Record<string, any>;
  /** A service's environment as compose resolves it with nothing set on the host. */
  const envOf = (name: string) => interpolate(services[name].environment, {}) as Record<string, string>;

  it('runs the documented deployment: two instances behind nginx on PostgreSQL and Redis', () => {
    expect(Object.keys(services).sort()).toEqual(['mediagate-1', 'mediagate-2', 'nginx', 'postgres', 'redis', 'simulator']);
    for (const name of ['mediagate-1', 'mediagate-2']) {
      const s = services[name];
      expect(s.build).toBe('.');
      const env = envOf(name);
      expect(env.DATABASE_URL).toMatch(/^postgres:\/\/mediagate:[^@]+@postgres:5432\/mediagate$/);
      expect(env.REDIS_URL).toBe('redis://redis:6379');
      expect(s.volumes).toContain(`./deploy/mediagate.yaml:${env.MEDIAGATE_CONFIG}:ro`);
      expect(s.depends_on).toMatchObject({ postgres: { condition: 'service_healthy' }, redis: { condition: 'service_healthy' } });
      expect(s.ports).toBeUndefined();
    }
    expect(services.postgres.healthcheck.test.join(' ')).toContain('pg_isready');
    expect(services.redis.healthcheck.test).toContain('ping');
    expect(services.nginx.ports).toEqual(['8080:80']);
    expect(services.nginx.depends_on).toEqual({ 'mediagate-1': { condition: 'service_healthy' }, 'mediagate-2': { condition: 'service_healthy' } });
    const nginx = readFileSync(join(ROOT, services.nginx.volumes[0].split(':')[0]), 'utf8');
    expect(nginx).toMatch(/server mediagate-1:8080\b/);
    expect(nginx).toMatch(/server mediagate-2:8080\b/);
    expect(nginx).toMatch(/proxy_buffering off;/);
    expect(services.simulator.command).toEqual(['node', 'dist/main.js', 'simulate', '--host', '0.0.0.0', '--port', '9090']);
  });

  it('gives each instance a config that loads: PostgreSQL, Redis and the shared simulator', () => {
    const env = envOf('mediagate-1');
    const { config } = loadConfig(env, join(ROOT, 'deploy', 'mediagate.yaml'));
    expect(config.database.url).toBe(env.DATABASE_URL);
    expect(config.redis?.url).toBe(env.REDIS_URL);
    expect(config.server.host).toBe('0.0.0.0');
    expect(config.server.shutdown_grace_s).toBeLessThan(Number.parseInt(services['mediagate-1'].stop_grace_period, 10));
    expect(config.channels.map((c) => c.base_url)).toEqual(['http://simulator:9090']);
  });
});

describe.skipIf(testDialect() === 'postgres')('the image’s start command on the host', () => {
  const dir = tempDir('mediagate-docker-cmd-');
  afterAll(() => dir.remove());

  // Starting a process takes seconds, more on a loaded machine.
  it('answers /readyz, and the image’s healthcheck passes against it (and fails once it is gone)', { timeout: 120_000 }, async () => {
    const configPath = join(dir.path, 'mediagate.yaml');
    writeFileSync(configPath, stringify({ database: { url: 'sqlite:./data/mediagate.db' }, simulator: { embedded: true } }));
    const [cmd, ...args] = execForm(arg('CMD')[0]);
    const env: NodeJS.ProcessEnv = { ...process.env, ...imageEnv, MEDIAGATE_CONFIG: configPath, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn' };
    for (const k of ['DATABASE_URL', 'REDIS_URL', 'OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'ARK_API_KEY']) delete env[k];
    // The image's WORKDIR holds what the repository root holds after a build: dist/ and package.json.
    const proc = spawn(cmd === 'node' ? process.execPath : cmd, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    proc.stdout!.on('data', (c: Buffer) => (out += String(c)));
    proc.stderr!.on('data', (c: Buffer) => (out += String(c)));
    const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no "listening" line: ${out}`)), 90_000);
        proc.stdout!.on('data', () => {
          const m = /mediagate listening on (http:\/\/\S+)/.exec(out);
          if (m) {
            clearTimeout(timer);
            resolve(m[1]);
          }
        });
      });
      const ready = await fetch(`${url}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({ status: 'ready' });

      const [hcmd, ...hargs] = execForm(arg('HEALTHCHECK')[0]);
      const port = new URL(url).port;
      const check = () => spawnSync(hcmd === 'node' ? process.execPath : hcmd, hargs, { env: { ...env, PORT: port }, timeout: 10_000 }).status;
      expect(check()).toBe(0);
      proc.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(check()).toBe(1);
    } finally {
      proc.kill('SIGKILL');
    }
  });
});
