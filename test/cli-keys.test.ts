import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliFixture, type CliFixture } from './helpers/cli.js';
import { openStore } from '../src/store/db.js';
import { hashApiKey } from '../src/auth/keys.js';

describe('mediagate keys (CLI)', { timeout: 120_000 }, () => {
  let cli: CliFixture;
  const run = (...args: string[]) => cli.run(...args);

  beforeAll(async () => {
    cli = await cliFixture();
  });
  afterAll(async () => {
    await cli.remove();
  });

  it('creates a key shown once, stores only its hash, lists and revokes it', async () => {
    const created = run('keys', 'create', '--name', 'app-1', '--models', 'sim-chat', '--rpm', '60', '--concurrency', '5', '--credit', '2.5', '--json');
    expect(created.status).toBe(0);
    const { id, name, key } = JSON.parse(created.stdout) as { id: string; name: string; key: string };
    expect(name).toBe('app-1');
    expect(key).toMatch(/^mg-[0-9A-Za-z]{40,}$/);

    const store = await openStore(cli.dbUrl);
    try {
      const row = await store.db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      expect(row.key_hash).toBe(hashApiKey(key));
      expect(JSON.stringify(row)).not.toContain(key.slice(3));
      expect(Number(row.credit_micros)).toBe(2_500_000);
      expect(Number(row.rpm)).toBe(60);
      expect(row.models).toBe('["sim-chat"]');
    } finally {
      await store.close();
    }

    const listed = run('keys', 'list', '--json');
    expect(listed.status).toBe(0);
    const keys = JSON.parse(listed.stdout) as Array<{ id: string; revoked: boolean; credit: number }>;
    expect(keys.find((k) => k.id === id)).toMatchObject({ revoked: false, credit: 2.5 });
    expect(listed.stdout).not.toContain(key);

    const topped = run('keys', 'credit', id, '+1.25');
    expect(topped.status).toBe(0);
    expect(topped.stdout).toContain('3.750000');

    expect(run('keys', 'revoke', id).status).toBe(0);
    const again = JSON.parse(run('keys', 'list', '--json').stdout) as Array<{ id: string; revoked: boolean }>;
    expect(again.find((k) => k.id === id)?.revoked).toBe(true);
    expect(run('keys', 'revoke', id).status).toBe(2);
  });

  it('prints the key in plain form without --json and rejects bad arguments with status 2', () => {
    const plain = run('keys', 'create', '--name', 'plain');
    expect(plain.status).toBe(0);
    expect(plain.stdout).toMatch(/mg-[0-9A-Za-z]{40,}/);
    expect(run('keys', 'create').status).toBe(2);
    expect(run('keys', 'create', '--name', 'x', '--models', 'nope').status).toBe(2);
    expect(run('keys', 'create', '--name', 'x', '--expires', 'tomorrow').status).toBe(2);
    expect(run('keys', 'create', '--name', 'x', '--rpm', '-1').status).toBe(2);
    expect(run('keys', 'frobnicate').status).toBe(2);
    expect(run('keys', 'credit', 'key_missing', '+1').status).toBe(2);
  });
});
