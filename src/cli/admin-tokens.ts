import { parseCommand, type CommandSpec } from './args.js';
import { CONFIG_OPTION, JSON_OPTION, adminOn, asCommand, configFor, out, withStore } from './common.js';

// `mediagate admin …`: the admin tokens of the admin API and console.

export const adminCreate = {
  name: 'admin create',
  summary: 'Create an admin token (mga-…) for the admin API and console; printed once.',
  options: { name: { type: 'string', arg: 'NAME', help: 'who holds the token', required: true }, ...JSON_OPTION, ...CONFIG_OPTION },
} satisfies CommandSpec;
export const adminList = { name: 'admin list', summary: 'List the admin tokens.', options: { ...JSON_OPTION, ...CONFIG_OPTION } } satisfies CommandSpec;
export const adminRevoke = { name: 'admin revoke', summary: 'Revoke an admin token (by id or name); its console sessions end at once.', args: ['ID|NAME'], options: { ...CONFIG_OPTION } } satisfies CommandSpec;

export async function adminCreateCommand(argv: string[]): Promise<void> {
  const { values } = parseCommand(adminCreate, argv);
  const { config } = configFor(values);
  const name = values.name!;
  const { token, secret } = await withStore(config, (s) =>
    asCommand(async () => {
      const a = adminOn(config, s);
      const made = await a.access.create(name);
      await a.record('admin_token.create', made.token.id, { name: made.token.name });
      return made;
    }),
  );
  if (values.json) return out(JSON.stringify({ id: token.id, name: token.name, token: secret }));
  out(`Created admin token ${token.id} (${token.name}). It is shown only this once:`);
  out(`  ${secret}`);
  if (!config.admin.enabled) out('The admin API and console are off: start the server with MEDIAGATE_ADMIN=1, or set admin.enabled: true in the config file.');
}

export async function adminListCommand(argv: string[]): Promise<void> {
  const { values } = parseCommand(adminList, argv);
  const { config } = configFor(values);
  const tokens = await withStore(config, (s) => adminOn(config, s).access.list(), { mustExist: true });
  if (values.json) return out(JSON.stringify(tokens));
  if (!tokens.length) return out('No admin tokens. Create one with: npx mediagate admin create --name NAME');
  for (const t of tokens) out(`${t.id}  ${t.name}  ${t.prefix}  ${t.revoked_at ? 'revoked' : 'active'}  created=${t.created_at}${t.last_used_at ? '  last_used=' + t.last_used_at : ''}`);
}

export async function adminRevokeCommand(argv: string[]): Promise<void> {
  const { values, positionals } = parseCommand(adminRevoke, argv);
  const { config } = configFor(values);
  const id = positionals[0];
  const t = await withStore(
    config,
    (s) =>
      asCommand(async () => {
        const a = adminOn(config, s);
        const r = await a.access.revoke(id);
        await a.record('admin_token.revoke', r.id, { name: r.name });
        return r;
      }),
    { mustExist: true },
  );
  out(`Revoked admin token ${t.id} (${t.name}); its console sessions ended.`);
}
