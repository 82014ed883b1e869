import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';
import { tokenize } from '../../src/simulator/tokens.js';
import { askSim, LENGTH_FINISH, SIM_WIRES } from '../helpers/sim-chat-wire.js';

// A simulated answer never has more output tokens (as the simulator counts them) than the request
// allows: max_tokens / max_completion_tokens, max_output_tokens, Anthropic's max_tokens, Gemini's
// generationConfig.maxOutputTokens, or 4096 when none is given; a cut answer says so in its
// format's words. A max tokens beyond what the simulator writes is refused, naming the range.

const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`).join(' ');

describe('simulator: answers honour max tokens', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ port: 0 });
  });
  afterAll(async () => sim.close());

  it.each(SIM_WIRES)('%s: an echo is cut at max tokens, streamed or not, with the length reason', async (wire) => {
    for (const stream of [false, true]) {
      const r = await askSim(sim.url, wire, { prompt: words(50), maxTokens: 5, stream });
      expect(r.status).toBe(200);
      expect(r.text).toBe('You said: w0 w1');
      expect(tokenize(r.text)).toHaveLength(5);
      expect(r.outputTokens).toBe(5);
      expect(r.finish).toBe(LENGTH_FINISH[wire]);
    }
  });

  it.each(SIM_WIRES)('%s: an answer that just fits is not cut', async (wire) => {
    const r = await askSim(sim.url, wire, { prompt: 'hi', maxTokens: 4 });
    expect(r.text).toBe('You said: hi');
    expect(r.outputTokens).toBe(4);
    expect(r.finish).not.toBe(LENGTH_FINISH[wire]);
  });

  it.each(SIM_WIRES)('%s: without max tokens an answer stops at 4096 tokens', async (wire) => {
    const r = await askSim(sim.url, wire, { prompt: words(5000), stream: wire === 'gemini' });
    expect(r.status).toBe(200);
    expect(tokenize(r.text)).toHaveLength(4096);
    expect(r.outputTokens).toBe(4096);
    expect(r.finish).toBe(LENGTH_FINISH[wire]);
  });

  it.each(SIM_WIRES)('%s: reasoning counts toward max tokens', async (wire) => {
    // Anthropic's thinking needs max_tokens above a budget of at least 1024.
    const maxTokens = wire === 'anthropic' ? 1100 : 8;
    const r = await askSim(sim.url, wire, { prompt: words(2000), maxTokens, reasoning: true });
    expect(r.status).toBe(200);
    expect(r.outputTokens).toBe(maxTokens);
    expect(r.finish).toBe(LENGTH_FINISH[wire]);
  });

  it.each(SIM_WIRES)('%s: a tool call cut by max tokens ends with the length reason', async (wire) => {
    const parameters = { type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' } } };
    for (const stream of [false, true]) {
      const r = await askSim(sim.url, wire, { prompt: words(50), maxTokens: 12, toolParameters: parameters, stream });
      expect(r.status).toBe(200);
      expect(r.finish).toBe(LENGTH_FINISH[wire]);
      expect(r.outputTokens).toBeLessThanOrEqual(12);
      if (!stream && (wire === 'anthropic' || wire === 'gemini')) expect(r.toolObject).toEqual({});
    }
    // With room, the same call is whole.
    const whole = await askSim(sim.url, wire, { prompt: 'hi', maxTokens: 100, toolParameters: parameters });
    expect(whole.finish).not.toBe(LENGTH_FINISH[wire]);
  });

  it.each(SIM_WIRES)('%s: refuses a max tokens above 131072 or below 1 in its error shape, naming the range', async (wire) => {
    for (const maxTokens of [131_073, 1_000_000_000, 0]) {
      const r = await askSim(sim.url, wire, { prompt: 'hi', maxTokens });
      expect(r.status).toBe(400);
      expect(r.body.error.message).toMatch(/from 1 to 131072/);
      if (wire === 'anthropic') expect(r.body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
      else if (wire === 'gemini') expect(r.body.error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' });
      else expect(r.body.error.type).toBe('invalid_request_error');
    }
    const top = await askSim(sim.url, wire, { prompt: 'hi', maxTokens: 131_072 });
    expect(top.status).toBe(200);
  });
});
