import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { suiteGateway } from './helpers/suite-gateway.js';

// The repository stands alone: README, docs and code never send the reader to a file outside it,
// and the README's chat examples (curl and both SDKs) run as written against a gateway.

const ROOT = join(__dirname, '..');
// Asynchronous: the gateway answering the examples runs in this process.
const run = promisify(execFile);
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

/** The first fenced block of `lang` after `heading`. */
function blockAfter(heading: string, lang: string): string {
  const from = README.indexOf(heading);
  expect(from, heading).toBeGreaterThanOrEqual(0);
  const m = new RegExp('```' + lang + '\\n([\\s\\S]*?)```').exec(README.slice(from));
  expect(m, `${lang} block after ${heading}`).not.toBeNull();
  return m![1];
}

describe('README and docs', () => {
  it('point at nothing outside the repository', () => {
    const files = ['README.md', ...filesUnder(join(ROOT, 'docs')), ...filesUnder(join(ROOT, 'src'))].map((f) => (f.startsWith('/') ? f : join(ROOT, f)));
    const offenders = files.filter((f) => /DESIGN\.md|\.\.\/shared|spec 2\.\d|\bthe spec\b/.test(readFileSync(f, 'utf8')));
    expect(offenders.map((f) => f.slice(ROOT.length + 1))).toEqual([]);
  });

  it('cite only files that exist', () => {
    const docs = ['README.md', ...filesUnder(join(ROOT, 'docs')).map((f) => f.slice(ROOT.length + 1))];
    const tracked = ['src', 'test', 'bench', 'bin', 'docs'].flatMap((d) => filesUnder(join(ROOT, d)));
    const names = new Set([...tracked.map((f) => basename(f)), ...readdirSync(ROOT)]);
    const missing: string[] = [];
    for (const doc of docs) {
      const text = readFileSync(join(ROOT, doc), 'utf8');
      // A path from the repository's root; one with a placeholder (`<name>`, `*`, `{json,md}`) or
      // the worked example's provider `acme` names a pattern, not a file.
      for (const [, path] of text.matchAll(/(?<![\w./-])((?:src|test|bench|bin|docs)\/[\w./<>*{},-]*[\w>*}])/g)) {
        if (/[<>*{}]|acme/.test(path)) continue;
        // A test or script may be cited without its extension.
        if (!['', '.test.ts', '.ts', '.mjs'].some((ext) => existsSync(join(ROOT, path + ext)))) missing.push(`${doc}: ${path}`);
      }
      // A file named alone in code quotes (`metered.ts`) must exist somewhere in the repository.
      for (const [, name] of text.matchAll(/`([\w.-]+\.(?:mjs|cjs|js|ts))`/g)) if (!names.has(name)) missing.push(`${doc}: ${name}`);
    }
    expect(missing).toEqual([]);
  });

  it('carry no lab notebook: benchmarks.md stays short, and no dated measurement outside its generated results', () => {
    const bench = readFileSync(join(ROOT, 'docs', 'benchmarks.md'), 'utf8');
    expect(bench.split('\n').length).toBeLessThanOrEqual(200);
    const generated = /<!-- bench:results:start -->[\s\S]*<!-- bench:results:end -->/;
    const docs = ['README.md', ...filesUnder(join(ROOT, 'docs')).map((f) => f.slice(ROOT.length + 1))];
    // A measurement's date and time ("… 15:33 UTC"), the machine's load at the time or a "round of" work.
    const dated = docs.filter((doc) => /\d\d:\d\d UTC\b|load average|\bround of\b/.test(readFileSync(join(ROOT, doc), 'utf8').replace(generated, '')));
    expect(dated).toEqual([]);
  });

  it('keep the quick start to one line', () => {
    expect(blockAfter('## Quick start', 'sh')).toBe('npm ci && npm start\n');
  });

  describe('with a gateway', () => {
    const s = suiteGateway();

    it('list every route of the gateway in the endpoints table', () => {
      const table = README.slice(README.indexOf('## Endpoints'), README.indexOf('\n## ', README.indexOf('## Endpoints') + 5));
      // Fastify's wildcard routes stand for the Gemini methods and the admin API, written out in the table.
      const written: Record<string, string[]> = { '/v1beta/models/*': [':generateContent', ':streamGenerateContent', ':predictLongRunning'], '/admin/api/*': ['/admin/api/'], '/console/*': ['/console'], '/console/': ['/console'] };
      const missing: string[] = [];
      for (const r of s.gw.app.routeTable.routes()) {
        if (r.method === 'HEAD' || r.method === 'OPTIONS') continue;
        const shown = written[r.url] ?? [r.url.replace(/:(\w+)/g, '{$1}').replace('{file}', '{file}:download')];
        for (const text of shown) if (!table.includes(text)) missing.push(`${r.method} ${r.url} (${text})`);
      }
      expect([...new Set(missing)]).toEqual([]);
    });

    it('answer through both SDKs with the base URLs shown (the Anthropic one without /v1)', async () => {
      const { gw, key } = s;
      const code = blockAfter('## Chat', 'js');
      expect(code).toContain('baseURL: `${process.env.MEDIAGATE_URL}/v1`');
      expect(code).toContain('baseURL: process.env.MEDIAGATE_URL,');
      const env = { ...process.env, MEDIAGATE_URL: gw.url, MEDIAGATE_KEY: key };
      const { stdout: out } = await run(process.execPath, ['--input-type=module', '-e', code], { cwd: ROOT, env, encoding: 'utf8', timeout: 20_000 });
      const lines = out.trim().split('\n');
      expect(lines).toHaveLength(2);
      for (const l of lines) expect(l).toContain('Say hello');
    });
  });
});
