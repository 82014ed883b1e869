// Reads a V8 .cpuprofile (node --cpu-prof) and lists where the time went: the functions with the
// most self time, and self time per module (a package in node_modules, a file of dist/, or Node
// itself), as shares of the time the process was not idle.
// Usage: node bench/lib/profile-summary.mjs <file.cpuprofile> [top=25]
import { readFileSync } from 'node:fs';

export function summarizeProfile(path, top = 25) {
  const p = JSON.parse(readFileSync(path, 'utf8'));
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  // Self time per node from the sample stream (each sample's delta belongs to that node).
  const self = new Map();
  for (let i = 0; i < p.samples.length; i++) self.set(p.samples[i], (self.get(p.samples[i]) ?? 0) + (p.timeDeltas[i] ?? 0));
  // Shares are of the busy time: waiting in the event loop ((idle)) is left out.
  const idleIds = new Set(p.nodes.filter((n) => n.callFrame.functionName === '(idle)').map((n) => n.id));
  for (const id of idleIds) self.delete(id);
  const total = [...self.values()].reduce((a, b) => a + b, 0) || 1;
  const fns = new Map();
  const modules = new Map();
  for (const [id, us] of self) {
    const cf = byId.get(id).callFrame;
    const file = cf.url.replace(/^file:\/\//, '');
    const where = file ? `${file.replace(/^.*?\/(node_modules|dist)\//, '$1/')}:${cf.lineNumber + 1}` : '';
    const name = `${cf.functionName || '(anonymous)'} ${where}`.trim();
    fns.set(name, (fns.get(name) ?? 0) + us);
    const mod = !file
      ? cf.functionName.startsWith('(') ? cf.functionName : '(native)'
      : file.includes('/node_modules/')
        ? 'node_modules/' + /\/node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file)[1]
        : file.includes('/dist/')
          ? 'dist/' + file.split('/dist/')[1]
          : file.startsWith('node:')
            ? 'node:' + file.slice(5).split('/')[0]
            : file;
    modules.set(mod, (modules.get(mod) ?? 0) + us);
  }
  const rank = (m) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => ({ name, selfMs: Math.round(us / 1000), pct: Math.round((us / total) * 1000) / 10 }));
  return { totalMs: Math.round(total / 1000), functions: rank(fns), modules: rank(modules) };
}

/**
 * Where the self time of functions named `name` comes from: the call stacks above them (up to
 * `depth` frames), each with its share of that function's self time. For native entries such as
 * `writev`, whose cost is charged to whoever called them.
 */
export function callersOf(path, name, depth = 6, top = 12) {
  const p = JSON.parse(readFileSync(path, 'utf8'));
  const parent = new Map();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const frame = (n) => {
    const cf = n.callFrame;
    const file = cf.url.replace(/^file:\/\//, '').replace(/^.*?\/(node_modules|dist)\//, '$1/');
    return `${cf.functionName || '(anonymous)'}${file ? ' ' + file + ':' + (cf.lineNumber + 1) : ''}`;
  };
  const stacks = new Map();
  let total = 0;
  for (let i = 0; i < p.samples.length; i++) {
    const n = byId.get(p.samples[i]);
    if (n.callFrame.functionName !== name) continue;
    const us = p.timeDeltas[i] ?? 0;
    total += us;
    const chain = [];
    for (let id = parent.get(n.id); id !== undefined && chain.length < depth; id = parent.get(id)) chain.push(frame(byId.get(id)));
    const k = chain.join(' < ');
    stacks.set(k, (stacks.get(k) ?? 0) + us);
  }
  return [...stacks.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([stack, us]) => ({ stack, pct: Math.round((us / (total || 1)) * 1000) / 10 }));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const callers = process.argv.find((a) => a.startsWith('--callers='))?.slice(10);
  if (callers) {
    for (const c of callersOf(process.argv[2], callers)) console.log(`${String(c.pct).padStart(5)}%  ${c.stack}`);
    process.exit(0);
  }
  const s = summarizeProfile(process.argv[2], Number(process.argv[3] ?? 25));
  console.log(`busy time sampled: ${s.totalMs} ms\n\nself time by function:`);
  for (const f of s.functions) console.log(`${String(f.pct).padStart(5)}%  ${f.name}`);
  console.log('\nself time by module:');
  for (const m of s.modules) console.log(`${String(m.pct).padStart(5)}%  ${m.name}`);
}
