import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { MAIN } from './helpers/gateway-process.js';

// The gateway process runs without V8's allocation-site pretenuring (src/v8-tuning.ts, loaded
// first by dist/main.js): a decision to allocate a hot site's objects in the old generation is
// never taken, so no process falls into the state that costs ~1.5x the CPU per request
// (docs/benchmarks.md). Observed through V8's own trace of its pretenuring decisions, on a workload
// that keeps every object of one hot allocation site alive (which V8 tenures by default).

const WORKLOAD = `
const keep = [];
function make(i) { return { a: i, b: [i, i] }; }
for (let i = 0; i < 1500000; i++) keep.push(make(i));
process.stdout.write('kept ' + keep.length + '\\n');
`;

describe('V8 settings of the gateway process', () => {
  let dir: string;
  let script: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'mg-v8-'));
    script = join(dir, 'workload.cjs');
    writeFileSync(script, WORKLOAD);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const tenureDecisions = (preload: string[]): { decisions: number; out: string } => {
    const out = execFileSync(process.execPath, ['--trace-pretenuring-statistics', ...preload, script], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    return { decisions: out.split('\n').filter((l) => /=> tenure\b/.test(l)).length, out };
  };

  it('takes no pretenuring decision once dist/main.js is loaded, where plain Node takes one on the same workload', () => {
    const plain = tenureDecisions([]);
    expect(plain.out).toContain('kept 1500000');
    // The control: without the gateway's setting, V8 tenures the hot site (else this test could not fail).
    expect(plain.decisions).toBeGreaterThan(0);
    const gateway = tenureDecisions(['--import', pathToFileURL(MAIN).href]);
    expect(gateway.out).toContain('kept 1500000');
    expect(gateway.decisions).toBe(0);
  });
});
