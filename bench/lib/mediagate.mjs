// mediagate as the bench runs it: the real CLI (`node dist/main.js serve`) with a config file and
// a SQLite database in a temp dir, auth, rate limits, credit and the usage ledger all on.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { startServer } from './children.mjs';

export const CHAT_MODEL = 'bench-chat';
export const HOLD_MODEL = 'bench-hold';
export const VIDEO_MODEL = 'doubao-seedance-1-0-pro-250528';

/**
 * Writes the config: chat models on an `openai` channel at the upstream (as Portkey's `openai`
 * provider with a custom host sees it), the Seedance model on an `ark` channel at the same
 * simulator, and the simulator's own catalogue, so GET /v1/models answers a realistic list.
 */
export async function writeConfig(dir, upstreamUrl, root, extra = {}, file = 'mediagate.json') {
  const { SIMULATOR_MODELS, SEEDANCE_MODELS } = await import(join(root, 'dist/config-file/defaults.js'));
  const chatPrice = { input_per_million: 0.15, output_per_million: 0.6 };
  const config = {
    // All load comes from one address (loopback): the per-client connection cap (default 1,024)
    // would refuse the stream test's 2,000 connections.
    server: { host: '127.0.0.1', port: 0, max_connections_per_client: 0 },
    database: { url: `sqlite:${join(dir, 'mediagate.db')}` },
    ...extra,
    channels: [
      { name: 'bench-openai', type: 'openai', base_url: `${upstreamUrl}/v1`, api_key: 'sk-bench-upstream', models: [CHAT_MODEL, HOLD_MODEL] },
      // The upstream is on loopback: its result URLs must be allowed to be.
      { name: 'bench-ark', type: 'ark', base_url: upstreamUrl, api_key: 'ark-bench-upstream', models: Object.keys(SEEDANCE_MODELS), allow_private_network: true },
      { name: 'bench-sim', type: 'simulator', base_url: upstreamUrl, api_key: 'sim-bench-upstream', models: Object.keys(SIMULATOR_MODELS) },
    ],
    models: {
      [CHAT_MODEL]: { kind: 'chat', owned_by: 'openai', price: chatPrice },
      [HOLD_MODEL]: { kind: 'chat', owned_by: 'openai', price: chatPrice },
      ...SIMULATOR_MODELS,
      ...SEEDANCE_MODELS,
    },
  };
  const path = join(dir, file); // JSON is YAML
  writeFileSync(path, JSON.stringify(config, null, 2));
  return path;
}

/**
 * Creates a bench key through the CLI. Limited (default): rpm, concurrency and credit far above the
 * load and its cost, so every check runs and none bites. `{ unlimited: true }`: no rpm, no
 * concurrency limit, unlimited credit (the ledger still records every request). `{ project }`: the
 * limited key, in that project (created with `createProject`), so its budget is checked too.
 */
export function createKey(root, configPath, { unlimited = false, project } = {}) {
  const limits = unlimited ? [] : ['--rpm', '100000000', '--concurrency', '100000', '--credit', '100000000'];
  const name = unlimited ? 'bench-unlimited' : project ? 'bench-budgeted' : 'bench';
  const out = execFileSync(
    process.execPath,
    [join(root, 'dist/main.js'), 'keys', 'create', '--name', name, ...limits, ...(project ? ['--project', project] : []), '--json'],
    { env: { ...process.env, MEDIAGATE_CONFIG: configPath }, encoding: 'utf8' },
  );
  return JSON.parse(out.trim().split('\n').pop());
}

/** A project with a month budget far above what the bench spends: every request checks and counts it, none is refused. */
export function createProject(root, configPath, name) {
  execFileSync(process.execPath, [join(root, 'dist/main.js'), 'projects', 'create', '--name', name, '--budget', '100000000', '--budget-period', 'month', '--json'], {
    env: { ...process.env, MEDIAGATE_CONFIG: configPath },
    encoding: 'utf8',
  });
}

export function startMediagate(root, configPath, { nodeArgs = [], name = 'mediagate' } = {}) {
  return startServer(name, [...nodeArgs, join(root, 'dist/main.js'), 'serve'], {
    env: { MEDIAGATE_CONFIG: configPath },
    ready: /mediagate listening on (\S+)/,
  });
}

/**
 * Config reloads of a running gateway: reload(path, text) writes the config file, sends SIGHUP and
 * resolves once the gateway logged that the reload applied (rejects when it logged a failure).
 */
export function reloadWatch(server) {
  let tail = '';
  let done = 0;
  let failed = 0;
  const seen = (chunk) => {
    const text = tail + chunk.toString();
    done += (text.match(/config reloaded/g) ?? []).length;
    failed += (text.match(/config reload failed/g) ?? []).length;
    // A phrase split across two chunks is found in the next one, and not counted twice.
    tail = text.slice(-32).replace(/.*config reload(ed| failed)/s, '');
  };
  server.child.stdout.on('data', seen);
  server.child.stderr.on('data', seen);
  return {
    async reload(path, text) {
      const [d0, f0] = [done, failed];
      writeFileSync(path, text);
      server.child.kill('SIGHUP');
      for (const until = Date.now() + 30_000; Date.now() < until; await new Promise((r) => setTimeout(r, 20))) {
        if (failed > f0) throw new Error(`${server.name}: the config reload failed`);
        if (done > d0) return;
      }
      throw new Error(`${server.name}: no config reload within 30 s`);
    },
  };
}
