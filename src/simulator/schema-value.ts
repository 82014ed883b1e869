import { countTokens, type TokenBudget } from './tokens.js';

// A JSON value valid against a client's JSON Schema (the subset clients send: types, properties,
// items, enum, const, anyOf/oneOf/allOf, $ref into $defs/definitions, bounds), written as tokens
// into the answer's budget: strings are the prompt, numbers its token count, within the schema's
// limits. The value is never built whole: a schema may ask for a hundred million items, and the
// writing stops where the budget ends (the answer is then cut, as a model's is at max tokens).

type Schema = Record<string, any>;

/** Deeper schemas ($ref cycles included) get null there. */
const MAX_DEPTH = 12;

interface Writer {
  root: Schema;
  prompt: string;
  promptTokens: number;
  budget: TokenBudget;
  out: string[];
}

/** Writes a value for `schema` (a response format's schema) into `out`. */
export function writeSchemaValue(schema: Schema, prompt: string, budget: TokenBudget, out: string[]): void {
  value(writer(schema, prompt, budget, out), schema, 0);
}

/** Writes a tool call's arguments: a value for the tool's schema when it describes an object, else {}. */
export function writeToolArguments(schema: Schema, prompt: string, budget: TokenBudget, out: string[]): void {
  const w = writer(schema, prompt, budget, out);
  const { s, depth } = resolve(w, schema, 0);
  if (s && kindOf(s) === 'object') value(w, s, depth);
  else budget.take('{}', out);
}

function writer(root: Schema, prompt: string, budget: TokenBudget, out: string[]): Writer {
  return { root: root && typeof root === 'object' ? root : {}, prompt, promptTokens: countTokens([prompt]), budget, out };
}

/** A type name in lower case (Gemini's OpenAPI-style schemas write them in capitals). */
function typeName(t: unknown): string {
  return String(t).toLowerCase();
}

/** Follows $ref, anyOf/oneOf and allOf to the schema that says what to write (null past MAX_DEPTH). */
function resolve(w: Writer, schema: unknown, depth: number): { s: Schema | null; depth: number } {
  let s = schema as Schema | null;
  for (;;) {
    if (!s || typeof s !== 'object' || depth > MAX_DEPTH) return { s: null, depth };
    if ('const' in s || (Array.isArray(s.enum) && s.enum.length)) return { s, depth };
    if (typeof s.$ref === 'string') {
      let target: any = w.root;
      for (const k of s.$ref.replace(/^#\/?/, '').split('/').filter(Boolean)) target = target?.[decodeURIComponent(k.replace(/~1/g, '/').replace(/~0/g, '~'))];
      s = target ?? {};
    } else if (Array.isArray(s.anyOf ?? s.oneOf) && (s.anyOf ?? s.oneOf).length) {
      const union: Schema[] = s.anyOf ?? s.oneOf;
      s = union.find((u) => typeName(u?.type) !== 'null') ?? union[0];
    } else if (Array.isArray(s.allOf) && s.allOf.length) {
      s = Object.assign({}, ...s.allOf);
    } else {
      return { s, depth };
    }
    depth++;
  }
}

/** What a resolved schema asks for: its type (the first that is not null), or one implied by its keywords. */
function kindOf(s: Schema): string {
  let type = s.type;
  if (Array.isArray(type)) type = type.find((t: unknown) => typeName(t) !== 'null') ?? 'null';
  if (!type) return s.properties ? 'object' : s.items ? 'array' : 'string';
  return typeName(type);
}

function value(w: Writer, schema: unknown, depth: number): void {
  const { budget, out } = w;
  if (budget.cut) return;
  const { s, depth: d } = resolve(w, schema, depth);
  if (!s) return budget.take('null', out);
  if ('const' in s) return budget.take(JSON.stringify(s.const) ?? 'null', out);
  if (Array.isArray(s.enum) && s.enum.length) return budget.take(JSON.stringify(s.enum[0]) ?? 'null', out);
  switch (kindOf(s)) {
    case 'object': {
      budget.take('{', out);
      let first = true;
      for (const [name, p] of Object.entries((s.properties ?? {}) as Record<string, unknown>)) {
        if (budget.cut) return;
        budget.take(`${first ? '' : ','}${JSON.stringify(name)}:`, out);
        value(w, p, d + 1);
        first = false;
      }
      return budget.take('}', out);
    }
    case 'array': {
      const n = Math.max(1, Number(s.minItems ?? 1));
      const count = Math.min(n, s.maxItems != null ? Number(s.maxItems) : n);
      budget.take('[', out);
      // Every item writes at least one token, so the budget ends even a count of millions.
      for (let i = 0; i < count && !budget.cut; i++) {
        if (i) budget.take(',', out);
        value(w, s.items ?? {}, d + 1);
      }
      return budget.take(']', out);
    }
    case 'integer':
    case 'number': {
      let n = w.promptTokens;
      if (s.minimum != null) n = Math.max(n, Number(s.minimum));
      if (s.exclusiveMinimum != null) n = Math.max(n, Number(s.exclusiveMinimum) + 1);
      if (s.maximum != null) n = Math.min(n, Number(s.maximum));
      if (s.exclusiveMaximum != null) n = Math.min(n, Number(s.exclusiveMaximum) - 1);
      return budget.take(JSON.stringify(n), out);
    }
    case 'boolean':
      return budget.take('true', out);
    case 'null':
      return budget.take('null', out);
    default:
      return string(w, s);
  }
}

const FORMATS = new Map<unknown, string>([
  ['date-time', '2026-01-01T00:00:00Z'],
  ['date', '2026-01-01'],
  ['email', 'user@example.com'],
  ['uri', 'https://example.com/'],
  ['url', 'https://example.com/'],
]);

/** The prompt within maxLength, padded with dots up to minLength (written only as far as the budget goes). */
function string(w: Writer, s: Schema): void {
  const { budget, out } = w;
  const formatted = FORMATS.get(s.format);
  if (formatted) return budget.take(JSON.stringify(formatted), out);
  let str = w.prompt || 'text';
  if (s.maxLength != null) str = str.slice(0, Number(s.maxLength));
  const quoted = JSON.stringify(str);
  budget.take(quoted.slice(0, -1), out);
  // Each dot is one token: the padding ends with the budget, however long minLength asks it to be.
  for (let pad = Number(s.minLength ?? 0) - str.length; pad > 0 && !budget.cut; pad -= 256) budget.take('.'.repeat(Math.min(pad, 256)), out);
  budget.take('"', out);
}
