import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateObject, generateText, streamText, tool, type LanguageModel, type ModelMessage } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { ChatOpenAI } from '@langchain/openai';
import { z } from 'zod';
import { embeddedDefault } from '../../src/config-file/defaults.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { WIRE_FORMATS } from '../helpers/chat-formats.js';

// The clients people build on — the Vercel AI SDK (its OpenAI provider over Chat Completions, over
// the Responses API and by default, its Anthropic and Google providers) and LangChain's ChatOpenAI —
// unmodified but for base URL and key, against every chat model of the embedded default (where the
// simulator answers each client in its own format), and against simulator channels that speak
// each upstream format, so every client also meets a converted upstream.

type ModelFactory = (gw: TestGateway, key: string, model: string) => LanguageModel;

const AI_SDK_CLIENTS: Record<string, ModelFactory> = {
  'openai.chat()': (gw, apiKey, m) => createOpenAI({ baseURL: `${gw.url}/v1`, apiKey }).chat(m),
  'openai.responses()': (gw, apiKey, m) => createOpenAI({ baseURL: `${gw.url}/v1`, apiKey }).responses(m),
  'openai()': (gw, apiKey, m) => createOpenAI({ baseURL: `${gw.url}/v1`, apiKey })(m),
  anthropic: (gw, apiKey, m) => createAnthropic({ baseURL: `${gw.url}/v1`, apiKey })(m),
  google: (gw, apiKey, m) => createGoogleGenerativeAI({ baseURL: `${gw.url}/v1beta`, apiKey })(m),
};

/** Chat models of the embedded default (the simulator channel answers each client in its format). */
const EMBEDDED_CHAT_MODELS = Object.entries(embeddedDefault({}).models as Record<string, { kind: string }>)
  .filter(([, m]) => m.kind === 'chat')
  .map(([id]) => id);

/** One simulator channel per upstream wire format, each with its own model. */
const CONVERTED_MODELS = WIRE_FORMATS.map((f) => `sim-via-${f}`);

function convertedConfig() {
  const d = embeddedDefault({}) as { channels: any[]; models: Record<string, any> };
  const models = { ...d.models };
  const channels = [...d.channels];
  for (const f of WIRE_FORMATS) {
    models[`sim-via-${f}`] = { kind: 'chat', owned_by: 'simulator', price: { input_per_million: 1, output_per_million: 2 } };
    channels.push({ name: `sim-${f}`, type: 'simulator', upstream_format: f, models: [`sim-via-${f}`] });
  }
  return { channels, models };
}

const Forecast = z.object({
  city: z.string(),
  forecast: z.array(z.object({ day: z.number().int(), sunny: z.boolean() })),
  source: z.object({ name: z.string(), kind: z.enum(['station', 'model']) }),
});

function checkForecast(v: z.infer<typeof Forecast>): void {
  expect(typeof v.city).toBe('string');
  expect(v.forecast.length).toBeGreaterThan(0);
  expect(typeof v.forecast[0].day).toBe('number');
  expect(typeof v.forecast[0].sunny).toBe('boolean');
  expect(v.source).toEqual({ name: expect.any(String), kind: 'station' });
}

const weather = tool({
  description: 'Weather of a city',
  inputSchema: z.object({ city: z.string(), days: z.number().int().min(1).max(7) }),
  execute: async ({ city, days }) => `sunny in ${city} for ${days} days`,
});

const SETUPS = [
  { name: 'the embedded default', models: EMBEDDED_CHAT_MODELS, config: () => { const d = embeddedDefault({}); return { channels: d.channels, models: d.models }; } },
  { name: 'simulator channels of every upstream format', models: CONVERTED_MODELS, config: convertedConfig },
];

describe.each(SETUPS)('third-party clients on $name', ({ models, config }) => {
  let gw: TestGateway;
  let key: string;
  beforeAll(async () => {
    gw = await startGateway(config());
    key = (await gw.createKey()).key;
  });
  afterAll(async () => gw.close());

  it('serves at least the two simulator chat models', () => {
    expect(models.length).toBeGreaterThanOrEqual(2);
  });

  describe.each(Object.keys(AI_SDK_CLIENTS))('AI SDK %s', (client) => {
    const lm = (model: string) => AI_SDK_CLIENTS[client](gw, key, model);

    describe.each(models)('%s', (model) => {
      it('generateText answers with its usage', async () => {
        const r = await generateText({ model: lm(model), prompt: 'Hello there', maxRetries: 0 });
        expect(r.text).toBe('You said: Hello there');
        expect(r.usage).toMatchObject({ inputTokens: 2, outputTokens: 5 });
        expect(r.finishReason).toBe('stop');
      });

      it('streamText streams the answer and reports its usage', async () => {
        const s = streamText({ model: lm(model), prompt: 'Hello there', maxRetries: 0, onError: () => {} });
        let text = '';
        let parts = 0;
        for await (const t of s.textStream) {
          text += t;
          parts++;
        }
        expect(text).toBe('You said: Hello there');
        expect(parts).toBeGreaterThan(1);
        expect(await s.usage).toMatchObject({ inputTokens: 2, outputTokens: 5 });
        expect(await s.finishReason).toBe('stop');
      });

      it("makes a tool call with toolChoice 'required' and answers from the tool result sent back", async () => {
        const first = await generateText({ model: lm(model), prompt: 'Rainy Lisbon', tools: { weather }, toolChoice: 'required', maxRetries: 0 });
        expect(first.toolCalls).toHaveLength(1);
        expect(first.toolCalls[0]).toMatchObject({ toolName: 'weather', input: { city: 'Rainy Lisbon', days: 2 } });
        expect(first.toolResults[0]).toMatchObject({ toolName: 'weather', output: 'sunny in Rainy Lisbon for 2 days' });
        const messages: ModelMessage[] = [{ role: 'user', content: 'Rainy Lisbon' }, ...first.response.messages];
        const second = await generateText({ model: lm(model), messages, tools: { weather }, maxRetries: 0 });
        expect(second.toolCalls).toHaveLength(0);
        expect(second.text).toBe('Tool result: sunny in Rainy Lisbon for 2 days');
      });

      it('generateObject answers an object valid against a nested schema', async () => {
        const r = await generateObject({ model: lm(model), schema: Forecast, prompt: 'Forecast for Porto', maxRetries: 0 });
        checkForecast(r.object);
      });

      it("takes a second turn built from the first turn's response.messages", async () => {
        const first = await generateText({ model: lm(model), prompt: 'Hello there', maxRetries: 0 });
        const messages: ModelMessage[] = [{ role: 'user', content: 'Hello there' }, ...first.response.messages, { role: 'user', content: 'And once more' }];
        const second = await generateText({ model: lm(model), messages, maxRetries: 0 });
        expect(second.text).toBe('You said: And once more');
        expect(second.usage.inputTokens).toBeGreaterThan(first.usage.inputTokens!);
      });
    });
  });

  describe.each([false, true])('LangChain ChatOpenAI (useResponsesApi: %s)', (useResponsesApi) => {
    const chat = (model: string) => new ChatOpenAI({ model, apiKey: key, configuration: { baseURL: `${gw.url}/v1` }, maxRetries: 0, useResponsesApi });

    describe.each(models)('%s', (model) => {
      it('invoke answers with its usage', async () => {
        const m = await chat(model).invoke('Hello there');
        expect(m.content).toEqual(useResponsesApi ? [expect.objectContaining({ type: 'text', text: 'You said: Hello there' })] : 'You said: Hello there');
        expect(m.usage_metadata).toMatchObject({ input_tokens: 2, output_tokens: 5 });
      });

      it('stream streams the answer and its usage', async () => {
        let text = '';
        let chunks = 0;
        let usage: unknown;
        for await (const c of await chat(model).stream('Hello there')) {
          chunks++;
          text += typeof c.content === 'string' ? c.content : c.content.map((p: any) => p.text ?? '').join('');
          if (c.usage_metadata) usage = c.usage_metadata;
        }
        expect(text).toBe('You said: Hello there');
        expect(chunks).toBeGreaterThan(1);
        expect(usage).toMatchObject({ input_tokens: 2, output_tokens: 5 });
      });

      it('withStructuredOutput answers an object valid against a nested schema', async () => {
        checkForecast(await chat(model).withStructuredOutput(Forecast).invoke('Forecast for Porto'));
      });
    });
  });
});
