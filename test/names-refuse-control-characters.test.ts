import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminGateway, type AdminGateway } from './helpers/admin.js';
import { cliFixture, type CliFixture } from './helpers/cli.js';
import { openStore } from '../src/store/db.js';
import { KeysRepo } from '../src/store/repos/keys.js';
import { AdminTokensRepo } from '../src/store/repos/admin-tokens.js';
import { validateConfig, ConfigError } from '../src/config-file/loader.js';
import { SIMULATOR_MODELS } from '../src/config-file/defaults.js';
import { createAdminAccess } from '../src/admin/index.js';

// Names shown to operators (key names, admin token names, model ids) may not hold control or
// bidirectional-control characters: they could rewrite a terminal line or make a name read as
// another. Names stored before that rule print escaped in the CLI.

const UNSAFE = [
  ['ANSI escape', 'red\u001b[31m'],
  ['OSC title', 'x\u001b]0;pwned\u0007'],
  ['newline', 'a\nmg-fake  line'],
  ['NUL', 'nul\u0000'],
  ['DEL', 'del\u007f'],
  ['C1 CSI', 'c1\u009b31m'],
  ['right-to-left override', 'name\u202Eevil'],
  ['left-to-right mark', 'x\u200Ey'],
  ['first strong isolate', 'x\u2068y'],
  ['Arabic letter mark', 'x\u061Cy'],
  ['line separator', 'x\u2028y'],
  ['paragraph separator', 'x\u2029y'],
] as const;
const SAFE = ['Zoë’s app', '视频服务', 'emoji 🎬', 'a-b_c.d (prod)'];
/** Any character the rule refuses, raw. */
// eslint-disable-next-line no-control-regex -- looking for raw control characters is the point
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/u;

describe('names refuse control characters', () => {
  let gw: AdminGateway;
  beforeAll(async () => {
    gw = await startAdminGateway();
  });
  afterAll(async () => gw?.close());

  it('refuses them in key names on create and rename, naming the character and the rule', async () => {
    const key = await gw.api('POST', '/admin/api/keys', { name: 'renamed-later' });
    for (const [what, name] of UNSAFE) {
      const made = await gw.api('POST', '/admin/api/keys', { name });
      expect(made.status, what).toBe(400);
      expect(made.body.error.code).toBe('invalid_request');
      expect(made.body.error.message).toMatch(/^name contains U\+[0-9A-F]{4} at position \d+; a name is printable text: no control characters/);
      expect(made.body.error.message, what).not.toMatch(RAW);
      const renamed = await gw.api('PATCH', `/admin/api/keys/${key.body.id}`, { name });
      expect(renamed.status, what).toBe(400);
    }
    expect((await gw.api('POST', '/admin/api/keys', { name: 'name\u202Eevil' })).body.error.message).toContain('U+202E at position 5');
    expect((await gw.api('GET', `/admin/api/keys/${key.body.id}`)).body.name).toBe('renamed-later');
    const names = (await gw.services.keys.list()).map((k) => k.name);
    for (const [, name] of UNSAFE) expect(names).not.toContain(name.trim());
    for (const name of SAFE) expect((await gw.api('POST', '/admin/api/keys', { name })).status, name).toBe(201);
  });

  it('refuses them in admin token names', async () => {
    for (const [what, name] of UNSAFE) {
      const err = await createAdminAccess(gw.services).create(name).catch((e: unknown) => e);
      expect(err, what).toMatchObject({ status: 400, code: 'invalid_request' });
    }
  });

  it('refuses them in model ids of the config file', () => {
    const config = (id: string) => ({
      channels: [{ name: 'sim', type: 'simulator', base_url: 'http://127.0.0.1:9', models: [id] }],
      models: { [id]: SIMULATOR_MODELS['sim-chat'] },
    });
    expect(() => validateConfig(config('chat\u202Eevil'))).toThrow(ConfigError);
    expect(() => validateConfig(config('chat\u202Eevil'))).toThrow(/models: the model id "chat\\u202eevil" contains U\+202E at position 5/);
    expect(() => validateConfig(config('chat-ok'))).not.toThrow();
  });
});

describe('the CLI prints stored names safely', { timeout: 120_000 }, () => {
  let cli: CliFixture;
  beforeAll(async () => {
    cli = await cliFixture();
  });
  afterAll(async () => cli?.remove());

  it('refuses such a name in keys create and admin create (exit 2)', () => {
    const key = cli.run('keys', 'create', '--name', 'evil\u001b[2J');
    expect(key.status).toBe(2);
    expect(key.stderr).toContain('name contains U+001B at position 5');
    expect(key.stderr).not.toContain('\u001b');
    const token = cli.run('admin', 'create', '--name', 'ops\u202E');
    expect(token.status).toBe(2);
    expect(token.stderr).toContain('U+202E');
  });

  it('escapes names stored before the rule in keys list, admin list and JSON output', async () => {
    const stored = 'legacy\u001b[2J\u001b]0;x\u0007\nkey_fake  fake  mg-abc…  active\u202Eevil\u009b';
    const store = await openStore(cli.dbUrl);
    try {
      await new KeysRepo(store.db).create({ name: stored, keyHash: 'h'.repeat(64), keyPrefix: 'mg-legacy', models: null, creditMicros: null, expiresAt: null });
      await new AdminTokensRepo(store.db).create(stored, 'g'.repeat(64), 'mga-legacy');
    } finally {
      await store.close();
    }
    for (const args of [['keys', 'list'], ['admin', 'list']]) {
      const listed = cli.run(...args);
      expect(listed.status, args.join(' ')).toBe(0);
      expect(listed.stdout).not.toMatch(RAW);
      expect(listed.stdout.trimEnd().split('\n')).toHaveLength(1);
      expect(listed.stdout).toContain('legacy\\u001b[2J\\u001b]0;x\\u0007\\u000akey_fake  fake  mg-abc…  active\\u202eevil\\u009b');
    }
    const json = cli.run('keys', 'list', '--json');
    expect(json.stdout).not.toMatch(RAW);
    expect((JSON.parse(json.stdout) as { name: string }[])[0].name).toBe(stored);
  });
});
