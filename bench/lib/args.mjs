// The bench's command line: every flag it knows, checked before anything starts. A misspelt flag
// or phase used to be ignored, and the run went on as a full run of about twenty-three minutes.
import { parseArgs } from 'node:util';

export const PHASES = ['chat', 'convert', 'streams', 'models', 'scale', 'tasks', 'list', 'poller'];
export const CHAT_TARGETS = ['raw', 'nginx', 'portkey', 'mediagate', 'unlimited', 'budgeted', 'traced10', 'traced100', 'idempotent'];

export const USAGE = `Usage: node bench/run.mjs [flags]   (npm run bench, npm run bench:smoke)
  --smoke                      small counts, about a minute: proves the harness end to end
  --only=<phase,...>           run some phases (development): ${PHASES.join(', ')}
  --targets=<target,...>       only these chat targets (development): ${CHAT_TARGETS.join(', ')}
  --profile                    run mediagate (and the traced gateways) under --cpu-prof and
                               print their top entries
  --baseline-root=<dir>        convert phase: also time another checkout's build on its
                               pass-through paths
  --help                       this text
`;

const list = (value, known, flag) => {
  const items = value.split(',').filter(Boolean);
  const unknown = items.filter((x) => !known.includes(x));
  if (!items.length) throw new Error(`${flag}: no name given (known: ${known.join(', ')})`);
  if (unknown.length) throw new Error(`${flag}: unknown "${unknown.join('", "')}" (known: ${known.join(', ')})`);
  return items;
};

/**
 * The flags of one run: { help, smoke, profile, only, targets, baselineRoot } (only and targets
 * undefined when not given). Throws with a message for an unknown flag, a flag without its value
 * or an unknown phase or target name.
 */
export function parseBenchArgs(argv) {
  const { values, positionals } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: true,
    options: {
      help: { type: 'boolean', short: 'h' },
      smoke: { type: 'boolean' },
      profile: { type: 'boolean' },
      only: { type: 'string' },
      targets: { type: 'string' },
      'baseline-root': { type: 'string' },
    },
  });
  if (positionals.length) throw new Error(`unexpected argument "${positionals[0]}"`);
  return {
    help: values.help === true,
    smoke: values.smoke === true,
    profile: values.profile === true,
    only: values.only === undefined ? undefined : list(values.only, PHASES, '--only'),
    targets: values.targets === undefined ? undefined : list(values.targets, CHAT_TARGETS, '--targets'),
    baselineRoot: values['baseline-root'],
  };
}
