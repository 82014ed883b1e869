import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import schema from '../../src/providers/kit/manifest.schema.json' with { type: 'json' };

// docs/providers.md is the manifest reference: every field the JSON Schema knows is named there
// (in code type), so a field added to the schema without its docs fails here.

const DOC = readFileSync(join(__dirname, '..', '..', 'docs', 'providers.md'), 'utf8');
const CODE_WORDS = new Set([...DOC.matchAll(/`([^`\n]+)`/g)].flatMap((m) => m[1].match(/[A-Za-z_][A-Za-z0-9_]*/g) ?? []));

/** Every property name of the schema, with the path of the first place it appears. */
function fields(s: unknown, path: string, out: Map<string, string>): Map<string, string> {
  if (Array.isArray(s)) s.forEach((x) => fields(x, path, out));
  else if (s && typeof s === 'object') {
    const props = (s as { properties?: Record<string, unknown> }).properties;
    if (props && typeof props === 'object' && !Array.isArray(props)) {
      for (const [k, v] of Object.entries(props)) {
        if (!out.has(k)) out.set(k, path ? `${path}.${k}` : k);
        fields(v, path ? `${path}.${k}` : k, out);
      }
    }
    for (const [k, v] of Object.entries(s)) if (k !== 'properties') fields(v, path, out);
  }
  return out;
}

describe('the manifest reference', () => {
  it('names every field of the manifest schema', () => {
    const all = fields(schema, '', new Map());
    expect(all.size).toBeGreaterThan(50);
    const undocumented = [...all].filter(([name]) => !CODE_WORDS.has(name)).map(([, path]) => path);
    expect(undocumented, 'fields of manifest.schema.json missing from docs/providers.md').toEqual([]);
  });

  it('fails for a field it does not name', () => {
    const extended = { properties: { ...schema.properties, brand_new_field: { type: 'string' } } };
    expect([...fields(extended, '', new Map()).keys()].filter((n) => !CODE_WORDS.has(n))).toEqual(['brand_new_field']);
  });
});
