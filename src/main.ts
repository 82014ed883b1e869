import { readFileSync } from 'node:fs';
import { ConfigError } from './config-file/loader.js';
import { helpText, parseCommand, usageLine, UsageError, wantsHelp, type CommandSpec } from './cli/args.js';
import { InstanceLockError } from './store/instance-lock.js';
import { GatewayConfigError } from './services.js';
import { CommandError, CommandFailed, fail, out } from './cli/common.js';
import { keysCreate, keysCreateCommand, keysCredit, keysCreditCommand, keysList, keysListCommand, keysRevoke, keysRevokeCommand, keysUpdate, keysUpdateCommand, keysWebhookSecret, keysWebhookSecretCommand } from './cli/keys.js';
import { projectsCreate, projectsCreateCommand, projectsList, projectsListCommand, projectsUpdate, projectsUpdateCommand } from './cli/projects.js';
import { adminCreate, adminCreateCommand, adminList, adminListCommand, adminRevoke, adminRevokeCommand } from './cli/admin-tokens.js';
import { channelSwitchCommand, channelsAdd, channelsAddCommand, channelsDisable, channelsEnable, channelsList, channelsListCommand, channelsRemove, channelsUpdate, channelsUpdateCommand } from './cli/channels.js';
import { usageCommand, usageSpec } from './cli/usage.js';
import { providersCheckCommand, providersCheckSpec, providersListCommand, providersListSpec } from './cli/providers.js';
import { migrateCommand, migrateSpec, reloadCommand, reloadSpec, serveCommand, serveSpec, simulate, simulateSpec } from './cli/serve.js';

const versionSpec = { name: 'version', summary: 'Print the version (also: --version).' } satisfies CommandSpec;

/** package.json's version; this file runs as src/main.ts (tests) or dist/main.js, both one level down. */
function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

interface Command {
  spec: CommandSpec;
  /** Runs the command; true when it keeps running (a server) and the process must not exit. */
  run(argv: string[]): Promise<void | 'running'>;
}

/** Every command, in the order `mediagate --help` lists them. */
export const COMMANDS: Command[] = [
  { spec: serveSpec, run: async (a) => (await serveCommand(a), 'running') },
  { spec: keysCreate, run: keysCreateCommand },
  { spec: keysList, run: keysListCommand },
  { spec: keysUpdate, run: keysUpdateCommand },
  { spec: keysCredit, run: keysCreditCommand },
  { spec: keysRevoke, run: keysRevokeCommand },
  { spec: keysWebhookSecret, run: keysWebhookSecretCommand },
  { spec: projectsCreate, run: projectsCreateCommand },
  { spec: projectsList, run: projectsListCommand },
  { spec: projectsUpdate, run: projectsUpdateCommand },
  { spec: adminCreate, run: adminCreateCommand },
  { spec: adminList, run: adminListCommand },
  { spec: adminRevoke, run: adminRevokeCommand },
  { spec: channelsList, run: channelsListCommand },
  { spec: channelsAdd, run: channelsAddCommand },
  { spec: channelsUpdate, run: channelsUpdateCommand },
  { spec: channelsEnable, run: channelSwitchCommand(channelsEnable, 'enable') },
  { spec: channelsDisable, run: channelSwitchCommand(channelsDisable, 'disable') },
  { spec: channelsRemove, run: channelSwitchCommand(channelsRemove, 'remove') },
  { spec: usageSpec, run: usageCommand },
  { spec: reloadSpec, run: reloadCommand },
  { spec: providersListSpec, run: providersListCommand },
  { spec: providersCheckSpec, run: providersCheckCommand },
  { spec: migrateSpec, run: migrateCommand },
  { spec: simulateSpec, run: async (a) => (await simulate(a), 'running') },
  { spec: versionSpec, run: async (a) => (parseCommand(versionSpec, a), out(`mediagate ${packageVersion()}`)) },
];

function overview(): string {
  const lines = ['mediagate — a gateway to generative models', '', 'Usage:'];
  for (const { spec } of COMMANDS) lines.push(`  ${usageLine(spec)}`, `      ${spec.summary}`);
  lines.push('', 'Run `npx mediagate <command> --help` for one command (e.g. `npx mediagate keys create --help`).');
  return lines.join('\n') + '\n';
}

/** The commands of a group (`keys`, `admin`…): the words after the group name. */
function groupOf(word: string): Command[] {
  return COMMANDS.filter((c) => c.spec.name.startsWith(`${word} `));
}

function groupHelp(word: string): string {
  const lines = [`Usage: mediagate ${word} <command>`, '', 'Commands:'];
  for (const { spec } of groupOf(word)) lines.push(`  ${usageLine(spec)}`, `      ${spec.summary}`);
  return lines.join('\n') + '\n';
}

/** The command the arguments name and the arguments left for it; a group without a known command is a UsageError. */
function findCommand(argv: string[]): { command: Command; rest: string[] } | { help: string } {
  const [first = 'serve', second] = argv;
  // `mediagate --port 8080` and `mediagate --config f.yaml` serve, as `mediagate` alone does.
  if (first.startsWith('-') && !['-h', '--help', '-v', '--version'].includes(first)) return { command: COMMANDS[0], rest: argv };
  if (first === 'help' || first === '--help' || first === '-h') {
    const topic = argv[1];
    if (topic === undefined) return { help: overview() };
    return findCommand([...argv.slice(1), '--help']);
  }
  if (first === '--version' || first === '-v') return { command: COMMANDS.find((c) => c.spec === versionSpec)!, rest: argv.slice(1) };
  const group = groupOf(first);
  if (group.length) {
    const sub = second === undefined ? undefined : group.find((c) => c.spec.name === `${first} ${second}`);
    if (sub) return { command: sub, rest: argv.slice(2) };
    if (second === undefined) throw new UsageError(`${first}: needs a command: ${group.map((c) => c.spec.name.slice(first.length + 1)).join(', ')} (see npx mediagate ${first} --help)`);
    if (second === '--help' || second === '-h') return { help: groupHelp(first) };
    throw new UsageError(`unknown ${first} command "${second}": one of ${group.map((c) => c.spec.name.slice(first.length + 1)).join(', ')} (see npx mediagate ${first} --help)`);
  }
  const command = COMMANDS.find((c) => c.spec.name === first);
  if (!command) throw new UsageError(`unknown command "${first}": one of ${[...new Set(COMMANDS.map((c) => c.spec.name.split(' ')[0]))].join(', ')} (see npx mediagate --help)`);
  return { command, rest: argv.slice(1) };
}

export async function main(argv: string[]): Promise<number> {
  try {
    const found = findCommand(argv);
    if ('help' in found) {
      process.stdout.write(found.help);
      return 0;
    }
    const { command, rest } = found;
    if (wantsHelp(rest)) {
      process.stdout.write(helpText(command.spec));
      return 0;
    }
    return (await command.run(rest)) === 'running' ? -1 : 0;
  } catch (err) {
    if (err instanceof ConfigError || err instanceof GatewayConfigError) {
      fail(`invalid configuration: ${err.message}`);
      return 2;
    }
    if (err instanceof CommandFailed) return 1;
    if (err instanceof CommandError || err instanceof InstanceLockError) {
      fail(err.message);
      return 1;
    }
    if (err instanceof UsageError) {
      fail(err.message, err.command ? `usage: ${usageLine(err.command)}\n` : '');
      return 2;
    }
    fail((err as Error).message);
    return 1;
  }
}

// Run when executed directly (not when imported by tests).
if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  void main(process.argv.slice(2)).then((code) => {
    if (code >= 0) process.exit(code);
  });
}
