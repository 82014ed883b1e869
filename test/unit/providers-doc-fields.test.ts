import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import schema from '../../src/providers/kit/manifest.schema.json' with { type: 'json' };

// docs/providers.md is the manifest reference: every field the JSON Schema allows is named there
// (in code spans), and every enum value of the auth schemes and states.

const doc = readFileSync(new URL('../../docs/providers.md', import.meta.url), 'utf8');
const spans = [...doc.replace(/```[\s\S]*?```/g, '').matchAll(/`([^`]+)`/g)].map((m) => m[1]);
const named = (word: string) => spans.some((s) => new RegExp(`(^|[^A-Za-z0-9_])${word.replace(/[$]/g, '\\$')}([^A-Za-z0-9_]|$)`).test(s));

function fields(node: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(node)) node.forEach((n) => fields(n, out));
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === 'properties') Object.keys(v as object).forEach((p) => out.add(p));
      fields(v, out);
    }
  }
  return out;
}

describe('docs/providers.md', () => {
  it('names every field of the manifest schema', () => {
    const missing = [...fields(schema)].filter((f) => !named(f));
    expect(missing).toEqual([]);
  });

  it('names every auth scheme and task state', () => {
    const defs = schema.definitions as Record<string, { properties?: Record<string, { enum?: string[] }>; enum?: string[] }>;
    for (const v of [...defs.auth.properties!.scheme.enum!, ...defs.state.enum!]) expect(named(v), v).toBe(true);
  });
});
