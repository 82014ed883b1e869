import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateConfig } from '../src/config-file/loader.js';
import { chatHoldMicros, chatQuote } from '../src/limits/pricing.js';
import { ledgerRowsWhen, startChatRig, type ChatRig } from './helpers/chat.js';

// Prompt-cache tokens priced: every chat wire format's report of cached input (and Anthropic's
// cache writes) reaches the price rule's cached_input_per_million / cache_write_per_million,
// streamed and not, through every pair of client and upstream formats. The simulator reports
// `[sim:cached=N]` (and on Messages `[sim:cache_write=N]`) from the prompt.

type Format = 'openai' | 'anthropic' | 'responses' | 'gemini';
const FORMATS: Format[] = ['openai', 'anthropic', 'responses', 'gemini'];

const PRICE = { input_per_million: 2, cached_input_per_million: 0.5, cache_write_per_million: 2.5, output_per_million: 8 };
const MODEL: Record<Format, string> = { openai: 'gpt-cache', anthropic: 'claude-cache', responses: 'resp-cache', gemini: 'gemini-cache' };
const MODELS = Object.fromEntries(Object.values(MODEL).map((id) => [id, { kind: 'chat', price: PRICE }]));
const PROMPT = '[sim:cached=7] [sim:cache_write=4] please remember this long and stable system prompt prefix';

function request(client: Format, model: string, stream: boolean): { path: string; body: Record<string, unknown> } {
  switch (client) {
    case 'openai':
      return { path: '/v1/chat/completions', body: { model, messages: [{ role: 'user', content: PROMPT }], ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}) } };
    case 'anthropic':
      return { path: '/v1/messages', body: { model, max_tokens: 200, messages: [{ role: 'user', content: PROMPT }], ...(stream ? { stream: true } : {}) } };
    case 'responses':
      return { path: '/v1/responses', body: { model, input: PROMPT, ...(stream ? { stream: true } : {}) } };
    case 'gemini':
      return { path: `/v1beta/models/${model}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`, body: { contents: [{ role: 'user', parts: [{ text: PROMPT }] }] } };
  }
}

/** The cached input tokens the client was told of, in its own format's usage. */
function clientCached(client: Format, text: string, stream: boolean): number {
  const datas = stream ? [...text.matchAll(/^data: (.*)$/gm)].map((m) => m[1]).filter((d) => d !== '[DONE]') : [text];
  const bodies: any[] = datas.map((d) => JSON.parse(d));
  let cached = -1;
  for (const b of bodies) {
    const u = client === 'openai' ? b.usage?.prompt_tokens_details : client === 'responses' ? (b.response ?? b).usage?.input_tokens_details : client === 'anthropic' ? (b.message ?? b).usage : b.usageMetadata;
    const v = client === 'openai' || client === 'responses' ? u?.cached_tokens : client === 'anthropic' ? u?.cache_read_input_tokens : u?.cachedContentTokenCount;
    if (typeof v === 'number') cached = v;
  }
  return cached;
}

describe('cached input tokens are priced in every format, streamed and not', { timeout: 120_000 }, () => {
  let rig: ChatRig;
  beforeAll(async () => {
    rig = await startChatRig({
      models: MODELS,
      creditMicros: 50_000_000,
      channels: (sim) => [
        { name: 'oai', type: 'openai', base_url: `${sim}/v1`, api_key: 'sk-test-openai-upstream', models: [MODEL.openai] },
        { name: 'oai-resp', type: 'openai', upstream_format: 'responses', base_url: `${sim}/v1`, api_key: 'sk-test-openai-upstream', models: [MODEL.responses] },
        { name: 'anth', type: 'anthropic', base_url: sim, api_key: 'sk-ant-test-upstream', models: [MODEL.anthropic] },
        { name: 'gem', type: 'gemini', base_url: sim, api_key: 'gemini-test-upstream', models: [MODEL.gemini] },
      ],
    });
  });
  afterAll(async () => rig?.close());

  let rows = 0;
  for (const client of FORMATS) {
    for (const upstream of FORMATS) {
      for (const stream of [false, true]) {
        it(`${client} client → ${upstream} upstream${stream ? ', streamed' : ''}`, async () => {
          const { path, body } = request(client, MODEL[upstream], stream);
          const res = await fetch(`${rig.gw.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${rig.key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
          const text = await res.text();
          expect(res.status, text).toBe(200);
          const all = await ledgerRowsWhen(rig, ++rows);
          const row = all[all.length - 1];
          const input = Number(row.input_units);
          const output = Number(row.output_units);
          // Only Anthropic reports cache writes; the simulator reports what the prompt's markers say.
          const written = upstream === 'anthropic' ? 4 : 0;
          const fresh = input - 7 - written;
          expect(fresh).toBeGreaterThan(0);
          expect(Number(row.cost_micros)).toBe(Math.ceil(fresh * 2 + 7 * 0.5 + written * 2.5 + output * 8 - 1e-6));
          expect(row.billed_by).toBe(
            `${fresh} input tokens × $2/M + 7 cached input tokens × $0.5/M + ${written ? `${written} cache write tokens × $2.5/M + ` : ''}${output} output tokens × $8/M`,
          );
          // The client reads the cached count in its own format.
          expect(clientCached(client, text, stream)).toBe(7);
        });
      }
    }
  }

  it('shows the cache rates in the model pricing', async () => {
    const m = (await (await fetch(`${rig.gw.url}/v1/models/${MODEL.anthropic}`, { headers: { authorization: `Bearer ${rig.key}` } })).json()) as any;
    expect(m.pricing).toEqual({ currency: 'USD', ...PRICE });
  });
});

describe('the cache rates in the price rule', () => {
  const model = { kind: 'chat' as const, price: PRICE };

  it('price cached and written tokens at their rates, the rest at the input rate', () => {
    // 1,000 input of which 600 cached and 100 written, 50 output: 300 × 2 + 600 × 0.5 + 100 × 2.5 + 50 × 8 = 1,550
    expect(chatQuote(model, 1000, 50, { cached: 600, written: 100 })).toEqual({
      micros: 1550,
      billedBy: '300 input tokens × $2/M + 600 cached input tokens × $0.5/M + 100 cache write tokens × $2.5/M + 50 output tokens × $8/M',
    });
    // A model without cache rates prices them as input: the same as no cache at all.
    const plain = { kind: 'chat' as const, price: { input_per_million: 2, output_per_million: 8 } };
    expect(chatQuote(plain, 1000, 50, { cached: 600 }).micros).toBe(chatQuote(plain, 1000, 50).micros);
    // A reported cache count above the input is capped at the input.
    expect(chatQuote(model, 10, 0, { cached: 50 }).micros).toBe(5);
  });

  it('holds the input at the highest input rate, so a cache write never exceeds the hold', () => {
    expect(chatHoldMicros(model, 1000, 100)).toBe(1000 * 2.5 + 100 * 8);
    expect(chatHoldMicros(model, 1000, 100)).toBeGreaterThanOrEqual(chatQuote(model, 1000, 100, { written: 1000 }).micros);
  });

  it('is refused at load on a model that is not chat', () => {
    const load = (kind: string, price: unknown) => {
      try {
        validateConfig({
          channels: [{ name: 's', type: 'simulator', base_url: 'http://127.0.0.1:1', models: ['m'] }],
          models: { m: { kind, ...(kind === 'video' ? { modes: ['text'] } : {}), price } },
        });
        return '';
      } catch (err) {
        return (err as Error).message;
      }
    };
    expect(load('chat', PRICE)).toBe('');
    expect(load('image', { per_image: 0.1, cached_input_per_million: 1 })).toBe('config: models.m.price.cached_input_per_million: only a chat model\'s price takes cached_input_per_million (this model is kind image)');
    expect(load('video', { per_second: 0.1, cache_write_per_million: 1 })).toBe('config: models.m.price.cache_write_per_million: only a chat model\'s price takes cache_write_per_million (this model is kind video)');
    expect(load('chat', { input_per_million: 1, cached_input_per_million: -1 })).toMatch(/^config: models\.m\.price\.cached_input_per_million: /);
  });
});
