import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// The shell examples of README.md and docs/*.md, as the docs-as-tests suite and the fresh-clone
// check read them. A ```sh block runs verbatim. An HTML comment on the line before its fence may say
// how a test treats it:
//   <!-- docs-test: server -->        starts the gateway (npm start…): the suite runs its own instead;
//                                     the fresh-clone check runs it in the background
//   <!-- docs-test: env -->           sets MEDIAGATE_URL and MEDIAGATE_KEY to what the server printed:
//                                     the suite sets them itself; the fresh-clone check fills them in
//   <!-- docs-test: skip REASON -->   not run (REASON is required: e.g. it runs the whole test suite)

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface DocBlock {
  /** "docs/video.md", relative to the repository. */
  file: string;
  /** Line of the opening fence, 1-based. */
  line: number;
  code: string;
  mark: { kind: 'run' } | { kind: 'server' } | { kind: 'env' } | { kind: 'skip'; reason: string };
}

/** README.md, then docs/*.md in name order. */
export function docFiles(root = ROOT): string[] {
  const docs = readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`);
  return ['README.md', ...docs];
}

/** Every ```sh block of one file, with the marker before it. A marker that is not understood is an error. */
export function shBlocks(file: string, root = ROOT): DocBlock[] {
  const lines = readFileSync(join(root, file), 'utf8').split('\n');
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^(\s*)```(\S*)\s*$/.exec(lines[i]);
    if (!fence) continue;
    const end = lines.findIndex((l, j) => j > i && l.trim() === '```');
    if (end < 0) throw new Error(`${file}:${i + 1}: a code block that never ends`);
    if (fence[2] === 'sh') {
      const before = lines.slice(0, i).reverse().find((l) => l.trim() !== '') ?? '';
      const m = /^<!--\s*docs-test:\s*(\w+)\s*(.*?)\s*-->$/.exec(before.trim());
      let mark: DocBlock['mark'] = { kind: 'run' };
      if (m) {
        if (m[1] === 'server' || m[1] === 'env') mark = { kind: m[1] };
        else if (m[1] === 'skip' && m[2]) mark = { kind: 'skip', reason: m[2] };
        else throw new Error(`${file}:${i}: a docs-test marker must be "server", "env" or "skip REASON", got "${before.trim()}"`);
      }
      const indent = fence[1].length;
      blocks.push({ file, line: i + 1, code: lines.slice(i + 1, end).map((l) => l.slice(Math.min(indent, l.length - l.trimStart().length))).join('\n') + '\n', mark });
    }
    i = end;
  }
  return blocks;
}

/** The commands of a block, continuation lines (`\` at the end) joined; comments dropped. */
export function commandsOf(code: string): string[] {
  return code
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.replace(/(^|\s)#.*$/, '').trim())
    .filter(Boolean);
}

/** What breaks the docs' conventions in one block, as messages naming the file and line. */
export function conventionProblems(b: DocBlock): string[] {
  const at = `${b.file}:${b.line}`;
  const problems: string[] = [];
  for (const cmd of commandsOf(b.code)) {
    // Every curl that sends a body says what the body is (a form, -F, sets its own).
    for (const curl of cmd.split(/\|\||&&|\||;|\$\(/).filter((c) => /\bcurl\b/.test(c))) {
      if (/\s(-d|--data(-raw|-binary)?|--json)\s/.test(curl) && !/content-type/i.test(curl)) problems.push(`${at}: a curl sends a body without its Content-Type: ${curl.trim().slice(0, 120)}`);
    }
    if (/\bcgt-\d{8,}|\bvideo_[0-9a-f]{16,}|\bkey_[A-Za-z0-9]{6,}\b/.test(cmd)) problems.push(`${at}: a hard-coded task or key id (capture it from an earlier answer): ${cmd.slice(0, 120)}`);
    if (b.mark.kind === 'run' && /https?:\/\/(127\.0\.0\.1|localhost):8080/.test(cmd)) problems.push(`${at}: the gateway's address written out (use $MEDIAGATE_URL): ${cmd.slice(0, 120)}`);
    for (const [, name] of cmd.matchAll(/\$\{?([A-Z][A-Z0-9_]*)/g)) {
      if (/^(MG_KEY|KEY|K|B|GW|BASE|BASE_URL|API_KEY|MEDIAGATE_BASE_URL|MEDIAGATE_API_KEY)$/.test(name)) problems.push(`${at}: $${name}: the docs' variables are $MEDIAGATE_URL and $MEDIAGATE_KEY`);
    }
    if (/(^|[;&|(]\s*|^\w+=[^\s()$]*\s+)mediagate\s/.test(cmd)) problems.push(`${at}: the CLI is "npx mediagate …": ${cmd.slice(0, 120)}`);
  }
  return problems;
}

// Running the blocks: bash, set -euo pipefail, every curl with --fail-with-body; the shell
// variables a block sets carry over to the next block of the same shell, as in a terminal.

const BLOCK_TIMEOUT_MS = 90_000;

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runBash(script: string, cwd: string, env: NodeJS.ProcessEnv): Promise<Outcome> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', script], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += String(c)));
    child.stderr.on('data', (c) => (stderr += String(c)));
    // The whole process group: a block's background job must not outlive it.
    const timer = setTimeout(() => {
      stderr += `\n(no end within ${BLOCK_TIMEOUT_MS} ms)`;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }, BLOCK_TIMEOUT_MS);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The script for one block: the file's variables so far, the block as written, then its variables saved. */
function script(block: DocBlock, state: string): string {
  return [
    `source ${JSON.stringify(state)}`,
    // An HTTP error answer fails the example (curl -s alone would exit 0 on a 404).
    'curl() { command curl --fail-with-body "$@"; }',
    'set -euo pipefail',
    block.code,
    // Only reached when the block succeeded: keep the shell variables it set for the next block
    // (not the environment's: MEDIAGATE_URL changes when the gateway restarts).
    `( set +u; for __v in $(compgen -v | grep -E '^[A-Za-z][A-Za-z0-9_]*$' | grep -vxF -f ${JSON.stringify(state + '.baseline')} | grep -vxF -e MEDIAGATE_URL -e MEDIAGATE_KEY -f <(compgen -e)); do declare -p "$__v"; done ) > ${JSON.stringify(state + '.next')} 2>/dev/null || true`,
    `mv ${JSON.stringify(state + '.next')} ${JSON.stringify(state)}`,
  ].join('\n');
}


/** A terminal in `cwd`: blocks run one after another; a failing block throws naming its file and line. */
export async function docShell(cwd: string, env: NodeJS.ProcessEnv): Promise<{ run(block: DocBlock): Promise<Outcome>; env: NodeJS.ProcessEnv }> {
  const state = join(cwd, '.shell-state');
  writeFileSync(state, '');
  // The variables bash has without any block: not carried over.
  writeFileSync(`${state}.baseline`, (await runBash('compgen -v', cwd, env)).stdout);
  const shell = {
    env,
    async run(block: DocBlock) {
      const r = await runBash(script(block, state), cwd, shell.env);
      if (r.code !== 0) {
        const tail = (s: string) => s.trim().split('\n').slice(-15).join('\n');
        throw new Error(`${block.file}:${block.line}: the example exited with status ${r.code}\n--- example\n${block.code}--- stderr\n${tail(r.stderr)}\n--- stdout\n${tail(r.stdout)}`);
      }
      return r;
    },
  };
  return shell;
}
