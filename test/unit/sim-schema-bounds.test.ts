import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';
import { tokenize } from '../../src/simulator/tokens.js';
import { askSim, LENGTH_FINISH, SIM_WIRES, type SimAsk } from '../helpers/sim-chat-wire.js';

// A client's JSON Schema decides the size of the value the simulator writes (a response format's
// schema, or a tool's parameters when it fabricates a call). Whatever sizes the schema asks for,
// the answer stops at the request's max tokens (4096 without one) and says it was cut, in every
// wire format, streamed or not; the process stays small and quick.

const nest = (levels: number): Record<string, unknown> => (levels ? { type: 'array', minItems: 1000, items: nest(levels - 1) } : { type: 'string', minLength: 100_000 });

// Every schema is an object at the top, so it serves as a tool's parameters too.
const HOSTILE: [string, Record<string, unknown>][] = [
  ['a hundred million items', { type: 'object', properties: { v: { type: 'array', minItems: 100_000_000, items: { type: 'string' } } } }],
  ['the reported 300 000 items', { type: 'object', properties: { v: { type: 'array', minItems: 300_000, items: { type: 'string' } } } }],
  ['a string of a billion characters', { type: 'object', properties: { s: { type: 'string', minLength: 1_000_000_000 } } }],
  ['arrays nested five deep, a thousand items each', { type: 'object', properties: { v: nest(5) } }],
  ['a $ref that recurses into itself', { type: 'object', properties: { v: { $ref: '#/$defs/n' } }, $defs: { n: { type: 'array', minItems: 1000, items: { $ref: '#/$defs/n' } } } }],
  ['Gemini-style capital types under anyOf and allOf', { type: 'OBJECT', properties: { v: { anyOf: [{ type: 'NULL' }, { allOf: [{ type: 'ARRAY' }, { minItems: 1e9, items: { type: 'NUMBER' } }] }] } } }],
];

describe('simulator: sizes taken from a client schema are bounded by the output budget', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ port: 0 });
  });
  afterAll(async () => sim.close());

  const cases = SIM_WIRES.flatMap((wire) => HOSTILE.flatMap(([name, schema]) => (['response schema', 'tool parameters'] as const).map((where) => [wire, where, name, schema] as const)));

  it.each(cases)('%s, %s: %s', async (wire, where, _name, schema) => {
    for (const maxTokens of [16, undefined]) {
      const cap = maxTokens ?? 4096;
      const ask: SimAsk = { prompt: 'hi there', maxTokens, ...(where === 'tool parameters' ? { toolParameters: schema } : { schema }) };
      const started = performance.now();
      const r = await askSim(sim.url, wire, ask);
      const ms = performance.now() - started;
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.finish).toBe(LENGTH_FINISH[wire]);
      expect(r.outputTokens).toBeGreaterThan(0);
      expect(r.outputTokens).toBeLessThanOrEqual(cap);
      expect(tokenize(r.text).length).toBeLessThanOrEqual(cap);
      // 4096 tokens of JSON: tens of kilobytes, answered in well under a second.
      expect(r.bytes).toBeLessThan(300_000);
      expect(ms).toBeLessThan(2000);
      // The formats that carry a tool call's arguments as an object carry none of a cut call.
      if (where === 'tool parameters' && (wire === 'anthropic' || wire === 'gemini')) expect(r.toolObject).toEqual({});
    }
  });

  it.each(SIM_WIRES)('%s: a streamed answer is cut the same way', async (wire) => {
    for (const where of ['schema', 'toolParameters'] as const) {
      const r = await askSim(sim.url, wire, { prompt: 'hi there', maxTokens: 16, stream: true, [where]: HOSTILE[0][1] });
      expect(r.status).toBe(200);
      expect(r.finish).toBe(LENGTH_FINISH[wire]);
      expect(r.outputTokens).toBeLessThanOrEqual(16);
      expect(tokenize(r.text).length).toBeLessThanOrEqual(16);
    }
  });

  it('counts a long word as several tokens, so a one-word prompt of 200 000 characters cannot swell an answer', async () => {
    expect(tokenize('x'.repeat(100))).toEqual(['x'.repeat(32), 'x'.repeat(32), 'x'.repeat(32), 'xxxx']);
    expect(tokenize(`a${' '.repeat(40)}b`).join('')).toBe(`a${' '.repeat(40)}b`);
    const schema = { type: 'object', properties: { v: { type: 'array', minItems: 1_000_000, items: { type: 'string' } } } };
    for (const wire of SIM_WIRES) {
      const r = await askSim(sim.url, wire, { prompt: 'x'.repeat(200_000), schema });
      expect(r.status).toBe(200);
      expect(r.finish).toBe(LENGTH_FINISH[wire]);
      expect(r.outputTokens).toBeLessThanOrEqual(4096);
      // At most 32 characters a token (plus the answer's envelope).
      expect(r.bytes).toBeLessThan(4096 * 32 + 20_000);
    }
  });

  it('still writes a whole valid value when it fits, as before', async () => {
    const schema = { type: 'object', properties: { name: { type: 'string', minLength: 12 }, n: { type: 'integer', minimum: 3 }, tags: { type: 'array', minItems: 2, maxItems: 2, items: { enum: ['a', 'b'] } }, when: { type: 'string', format: 'date' } }, required: ['name'] };
    for (const wire of SIM_WIRES) {
      const r = await askSim(sim.url, wire, { prompt: 'hi there', schema });
      expect(r.status).toBe(200);
      expect(r.finish).not.toBe(LENGTH_FINISH[wire]);
      expect(JSON.parse(r.text)).toEqual({ name: 'hi there....', n: 3, tags: ['a', 'a'], when: '2026-01-01' });
    }
  });
});
