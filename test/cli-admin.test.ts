import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliFixture, type CliFixture } from './helpers/cli.js';
import { openStore } from '../src/store/db.js';
import { hashApiKey } from '../src/auth/keys.js';

// `mediagate admin create|list|revoke` and `mediagate keys update`, through the compiled CLI.

describe('CLI: admin tokens and keys update', () => {
  let cli: CliFixture;
  beforeAll(async () => {
    cli = await cliFixture();
  });
  afterAll(async () => cli?.remove());

  it('creates an admin token shown once and stored only as its hash; lists and revokes it', async () => {
    const made = cli.run('admin', 'create', '--name', 'ops', '--json');
    expect(made.status, made.stderr).toBe(0);
    const { id, token } = JSON.parse(made.stdout);
    expect(token).toMatch(/^mga-[0-9A-Za-z]{48}$/);
    const store = await openStore(cli.dbUrl);
    try {
      const row = await store.db.selectFrom('admin_tokens').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      expect(row.token_hash).toBe(hashApiKey(token));
      expect(JSON.stringify(row)).not.toContain(token.slice(10));
    } finally {
      await store.close();
    }
    expect(cli.run('admin', 'create', '--name', 'ops').status).toBe(1);
    const listed = cli.run('admin', 'list', '--json');
    expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ id, name: 'ops', revoked_at: null })]);
    expect(listed.stdout).not.toContain(token.slice(10));
    expect(cli.run('admin', 'revoke', 'ops').status).toBe(0);
    expect(JSON.parse(cli.run('admin', 'list', '--json').stdout)[0].revoked_at).not.toBeNull();
    expect(cli.run('admin', 'revoke', id).status).toBe(1);
    expect(cli.run('admin', 'create').status).toBe(2);
    expect(cli.run('admin', 'frobnicate').status).toBe(2);
  }, 120_000);

  it('updates a key\'s name, models, limits and expiry', () => {
    const { id } = JSON.parse(cli.run('keys', 'create', '--name', 'app', '--json').stdout);
    const up = cli.run('keys', 'update', id, '--name', 'app-2', '--models', 'sim-chat', '--rpm', '30', '--concurrency', '3', '--expires', '2099-01-01T00:00:00Z', '--json');
    expect(up.status, up.stderr).toBe(0);
    expect(JSON.parse(up.stdout)).toMatchObject({ id, name: 'app-2', models: ['sim-chat'], rpm: 30, concurrency: 3, expires_at: '2099-01-01T00:00:00.000Z' });
    const back = cli.run('keys', 'update', id, '--models', '*', '--expires', 'never', '--json');
    expect(JSON.parse(back.stdout)).toMatchObject({ models: null, expires_at: null, rpm: 30 });
    expect(cli.run('keys', 'update', id).status).toBe(2);
    expect(cli.run('keys', 'update', id, '--rpm', 'x').status).toBe(2);
    expect(cli.run('keys', 'update', id, '--models', 'nope').status).toBe(2);
    expect(cli.run('keys', 'update', 'key_missing', '--rpm', '1').status).toBe(2);
    const audit = cli.run('keys', 'list', '--json');
    expect(JSON.parse(audit.stdout).find((k: any) => k.id === id)).toMatchObject({ name: 'app-2', held: 0 });
  }, 120_000);
});
