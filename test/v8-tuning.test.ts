import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
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

  // src/v8-tuning.ts holds one tick object so the shape V8 gives Node's tick objects is never
  // collected (docs/benchmarks.md). Checked against a tick object made now: same V8 map, i.e. the
  // held object keeps exactly the shape every process.nextTick() builds.
  it('holds an object of the very shape of the tick objects process.nextTick() makes', () => {
    const probe = join(dir, 'tick.mjs');
    writeFileSync(
      probe,
      `import { executionAsyncResource } from 'node:async_hooks';
const { keptTickObject } = await import(process.argv[2]);
setImmediate(() => process.nextTick(() => {
  const held = keptTickObject();
  const now = executionAsyncResource();
  process.stdout.write(JSON.stringify({ held: held && Reflect.ownKeys(held).map(String).sort(), sameMap: held !== null && %HaveSameMap(held, now), distinct: held !== now }));
}));
`,
    );
    const tuning = pathToFileURL(join(dirname(MAIN), 'v8-tuning.js')).href;
    const out = JSON.parse(execFileSync(process.execPath, ['--allow-natives-syntax', probe, tuning], { encoding: 'utf8' })) as { held: string[] | null; sameMap: boolean; distinct: boolean };
    expect(out.held).toEqual(['Symbol(async_id_symbol)', 'Symbol(trigger_async_id_symbol)', 'args', 'callback']);
    expect(out.distinct).toBe(true);
    expect(out.sameMap).toBe(true);
  });
});
