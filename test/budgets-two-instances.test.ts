import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { freshDatabaseUrl, testDialect } from './helpers/databases.js';
import { freshRedisPrefix } from './helpers/redis.js';
import { validateConfig } from '../src/config-file/loader.js';
import { createServices, type Services } from '../src/services.js';
import { buildApp } from '../src/app.js';
import type { Gateway } from '../src/pipeline/gateway.js';
import { generateApiKey, hashApiKey, displayPrefix } from '../src/auth/keys.js';
import { ProjectsRepo } from '../src/store/repos/projects.js';
import { SIMULATOR_MODELS } from '../src/config-file/defaults.js';

// Two gateway instances on one PostgreSQL database and one Redis, requests spread over both at
// once: a key's day budget and its project's month budget each admit exactly what they hold.
// (Several instances on one SQLite file is not a supported deployment.)

describe.skipIf(testDialect() !== 'postgres')('budgets across two instances (PostgreSQL + Redis)', () => {
  const redis = freshRedisPrefix();
  let db: Awaited<ReturnType<typeof freshDatabaseUrl>>;
  const instances: { services: Services; app: Gateway; url: string }[] = [];

  beforeAll(async () => {
    db = await freshDatabaseUrl();
    const config = validateConfig(
      {
        server: { host: '127.0.0.1', port: 0 },
        database: { url: db.url },
        redis: redis.config,
        log: { level: 'warn' },
        simulator: { embedded: true },
        channels: [{ name: 'simulator', type: 'simulator', models: ['sim-image'] }],
        models: { 'sim-image': SIMULATOR_MODELS['sim-image'] },
      },
      'test config',
    );
    for (let i = 0; i < 2; i++) {
      const services = await createServices(config, { warn: (m) => process.stderr.write(`instance ${i}: ${m}\n`) });
      const app = buildApp(services, { logStream: new Writable({ write: (_c, _e, cb) => cb() }) });
      await app.listen({ host: '127.0.0.1', port: 0 });
      const address = app.server.address();
      instances.push({ services, app, url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}` });
    }
  });
  afterAll(async () => {
    for (const i of instances) {
      await i.app.close();
      await i.services.close();
    }
    await redis.cleanup();
    await db?.drop();
  });

  async function key(projectId: string, budget?: { micros: number; period: string }) {
    const secret = generateApiKey();
    await instances[0].services.keys.create({ name: 'k', keyHash: hashApiKey(secret), keyPrefix: displayPrefix(secret), creditMicros: 10_000_000, projectId, budgetMicros: budget?.micros, budgetPeriod: budget?.period });
    return secret;
  }

  const burst = (secret: string, n: number) =>
    Promise.all(
      Array.from({ length: n }, (_, i) =>
        fetch(`${instances[i % 2].url}/v1/images/generations`, {
          method: 'POST',
          headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'sim-image', prompt: `corgi ${i}` }),
        }).then(async (r) => (await r.arrayBuffer(), r.status)),
      ),
    );

  it('refuses at the exact amount: a key day budget and its project month budget', async () => {
    const prj = await new ProjectsRepo(instances[0].services.store.db).create({ name: 'shared', budget_micros: 160_000, budget_period: 'month' });
    // $0.02 an image: the key's $0.10 a day admits 5 of 12.
    const first = await burst(await key(prj.id, { micros: 100_000, period: 'day' }), 12);
    expect(first.filter((s) => s === 200)).toHaveLength(5);
    expect(first.filter((s) => s === 402)).toHaveLength(7);
    // The project has $0.06 of its $0.16 left for another key: 3 of 12.
    const second = await burst(await key(prj.id), 12);
    expect(second.filter((s) => s === 200)).toHaveLength(3);
    expect(second.filter((s) => s === 402)).toHaveLength(9);
    const windows = await instances[1].services.store.db.selectFrom('budget_windows').select(['scope', 'spent_micros', 'held_micros']).orderBy('scope').execute();
    expect(windows.map((w) => [w.scope.split(':')[0], Number(w.spent_micros), Number(w.held_micros)])).toEqual([
      ['key', 100_000, 0],
      ['project', 160_000, 0],
    ]);
  });
});
