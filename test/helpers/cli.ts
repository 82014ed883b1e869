import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './gateway.js';
import { freshDatabaseUrl } from './databases.js';

const MAIN = join(__dirname, '..', '..', 'dist', 'main.js');

export interface CliFixture {
  /** URL of the fixture's fresh database. */
  dbUrl: string;
  /** Runs `mediagate <args>` against the fixture's config file. */
  run(...args: string[]): SpawnSyncReturns<string>;
  remove(): Promise<void>;
}

/** A config file on a fresh database (two simulator models), for driving the compiled CLI. */
export async function cliFixture(): Promise<CliFixture> {
  const dir = tempDir();
  const db = await freshDatabaseUrl();
  const configPath = join(dir.path, 'mediagate.yaml');
  writeFileSync(
    configPath,
    `database: { url: "${db.url}" }\nchannels:\n  - { name: s, type: simulator, base_url: "http://127.0.0.1:9", models: [sim-chat, sim-image] }\nmodels:\n  sim-chat: { kind: chat }\n  sim-image: { kind: image }\n`,
  );
  return {
    dbUrl: db.url,
    run: (...args) => spawnSync(process.execPath, [MAIN, ...args], { env: { ...process.env, MEDIAGATE_CONFIG: configPath }, encoding: 'utf8', timeout: 20000 }),
    async remove() {
      await db.drop();
      dir.remove();
    },
  };
}
