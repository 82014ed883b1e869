/**
 * The command line's one parser: every `mediagate` command declares its options and arguments
 * here, so `--help` prints the same text the parser enforces, and a mistake is reported in one line
 * followed by that command's usage (never the whole list of commands).
 */

export type OptionSpec =
  | { type: 'string'; /** Placeholder in the usage, e.g. "USD". */ arg: string; help: string; required?: boolean }
  | { type: 'boolean'; help: string };

export interface CommandSpec<O extends Record<string, OptionSpec> = Record<string, OptionSpec>> {
  /** The words after `mediagate`, e.g. "keys create". */
  name: string;
  /** What the command does, one line. */
  summary: string;
  /** Positional arguments as the usage shows them; a name in brackets is optional ("[ID]"). */
  args?: string[];
  options?: O;
}

/** A mistake in the arguments (exit status 2): reported in one line, then the command's usage. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly command?: CommandSpec,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

type Values<O extends Record<string, OptionSpec>> = { [K in keyof O]?: O[K] extends { type: 'boolean' } ? boolean : string };

export interface Parsed<O extends Record<string, OptionSpec>> {
  values: Values<O>;
  positionals: string[];
}

/** `mediagate keys create --name NAME [--models a,b] …`: options in the order the command declares them. */
export function usageLine(spec: CommandSpec): string {
  const parts = [`mediagate ${spec.name}`, ...(spec.args ?? [])];
  for (const [name, o] of Object.entries(spec.options ?? {})) {
    const text = o.type === 'string' ? `--${name} ${o.arg}` : `--${name}`;
    parts.push(o.type === 'string' && o.required ? text : `[${text}]`);
  }
  return parts.join(' ');
}

/** What `mediagate <command> --help` prints. */
export function helpText(spec: CommandSpec): string {
  const lines = [`Usage: ${usageLine(spec)}`, '', spec.summary];
  const options = Object.entries(spec.options ?? {});
  if (options.length) {
    lines.push('', 'Options:');
    const labels = options.map(([name, o]) => (o.type === 'string' ? `--${name} ${o.arg}` : `--${name}`));
    const width = Math.max(...labels.map((l) => l.length), '--help'.length);
    options.forEach(([, o], i) => lines.push(`  ${labels[i].padEnd(width)}  ${o.help}`));
    lines.push(`  ${'--help'.padEnd(width)}  this text`);
  } else lines.push('', `Options:\n  --help  this text`);
  return lines.join('\n') + '\n';
}

/** True when the arguments ask for help (`--help` or `-h` before a `--`). */
export function wantsHelp(argv: readonly string[]): boolean {
  for (const a of argv) {
    if (a === '--') return false;
    if (a === '--help' || a === '-h') return true;
  }
  return false;
}

/**
 * Reads the arguments of one command. `--opt value` and `--opt=value` both work; a string option
 * takes the next argument whatever it looks like (`--credit -2.5`). Unknown options, missing
 * values, a missing required option and too many or too few arguments are UsageErrors.
 */
export function parseCommand<O extends Record<string, OptionSpec>>(spec: CommandSpec<O>, argv: readonly string[]): Parsed<O> {
  const options: Record<string, OptionSpec> = spec.options ?? {};
  const values: Record<string, string | boolean> = {};
  const positionals: string[] = [];
  const wrong = (message: string) => new UsageError(`${spec.name}: ${message}`, spec);
  {
    for (let i = 0; i < argv.length; i++) {
      const a = argv[i];
      if (a === '--') {
        positionals.push(...argv.slice(i + 1));
        break;
      }
      // A negative number is an argument (`keys credit ID -2.5`), not an option.
      if (!a.startsWith('-') || a === '-' || /^-[\d.]/.test(a)) {
        positionals.push(a);
        continue;
      }
      const eq = a.indexOf('=');
      const name = a.startsWith('--') ? a.slice(2, eq > 0 ? eq : undefined) : '';
      const o = Object.hasOwn(options, name) ? options[name] : undefined;
      if (!o) {
        const known = Object.keys(options).map((n) => `--${n}`);
        throw wrong(`unknown option ${eq > 0 ? a.slice(0, eq) : a}${known.length ? ` (options: ${known.join(', ')})` : ' (it takes none)'}`);
      }
      if (o.type === 'boolean') {
        if (eq > 0) throw wrong(`--${name} takes no value`);
        values[name] = true;
        continue;
      }
      let value: string;
      if (eq > 0) value = a.slice(eq + 1);
      else {
        if (i + 1 >= argv.length) throw wrong(`--${name} needs a value (${o.arg})`);
        value = argv[++i];
      }
      if (name in values) throw wrong(`--${name} given twice`);
      values[name] = value;
    }
  }
  for (const [name, o] of Object.entries(options)) {
    if (o.type === 'string' && o.required && values[name] === undefined) throw wrong(`needs --${name} ${o.arg}`);
  }
  {
    const declared = spec.args ?? [];
    const required = declared.filter((a) => !a.startsWith('[')).length;
    const variadic = declared.some((a) => a.includes('…'));
    if (positionals.length < required) throw wrong(`needs ${declared.slice(positionals.length).filter((a) => !a.startsWith('[')).join(' ')}`);
    if (!variadic && positionals.length > declared.length) {
      throw wrong(`unexpected argument "${positionals[declared.length]}"${declared.length ? ` (it takes ${declared.join(' ')})` : ' (it takes none)'}`);
    }
  }
  return { values: values as Values<O>, positionals };
}

/** A whole number option (`--rpm 60`), or undefined when absent. */
export function wholeNumber(spec: CommandSpec, name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) throw new UsageError(`${spec.name}: --${name} must be a whole number, got "${v}"`, spec);
  return Number(v);
}
