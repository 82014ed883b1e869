import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI, { toFile } from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI, type GenerateVideosOperation, type GenerateVideosParameters } from '@google/genai';
import { embeddedDefault } from '../../src/config-file/defaults.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { photo } from '../helpers/png.js';

// Every model of the embedded default, as GET /v1/models lists it (so models added to the default
// are covered without touching this file), through the official clients that have the call:
// chat with openai (Chat Completions and Responses), @anthropic-ai/sdk (messages and countTokens)
// and @google/genai (generateContent); images with openai's images.generate; video with openai's
// videos (create, retrieve until done, downloadContent) and @google/genai's generateVideos
// (getVideosOperation until done, then the video's bytes from its URI). A video model that takes no
// text-only request is asked from a first frame (and, through genai, first and last frames or
// reference images), as its modes allow. Video runs in parallel, a few at a time, on 0.3 s tasks.

const PICTURE = photo(64, 64);
const isMp4 = (bytes: Uint8Array) => Buffer.from(bytes).subarray(4, 8).toString('latin1') === 'ftyp';
const PARALLEL = 6;

interface Listed {
  id: string;
  supported_endpoint_types: string[];
}

/** Runs `work` over `items`, `n` at a time; returns each item's failure message (empty when all passed). */
async function eachLimited<T>(items: T[], n: number, work: (item: T) => Promise<void>, name: (item: T) => string): Promise<string[]> {
  const failures: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) {
        const item = items[next++];
        await work(item).catch((err: unknown) => failures.push(`${name(item)}: ${(err as Error).message}`));
      }
    }),
  );
  return failures;
}

const unsupportedMode = (err: unknown) => /unsupported_mode|does not support|mode/i.test(String((err as Error)?.message ?? err));

describe('official clients on every model of the embedded default (GET /v1/models)', () => {
  let gw: TestGateway;
  let key: string;
  let models: { chat: string[]; image: string[]; video: string[] };
  let openai: OpenAI;
  beforeAll(async () => {
    const d = embeddedDefault({});
    gw = await startGateway({ channels: d.channels, models: d.models });
    key = (await gw.createKey()).key;
    openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
    // The list itself through the OpenAI client; the kind from the endpoint types each model lists.
    const listed: Listed[] = [];
    for await (const m of openai.models.list()) listed.push(m as unknown as Listed);
    const of = (type: string) => listed.filter((m) => m.supported_endpoint_types.includes(type)).map((m) => m.id);
    models = { chat: of('openai'), image: of('image-generation'), video: of('openai-video') };
  });
  afterAll(async () => gw?.close());

  it('lists every model of the embedded default, each under one kind', () => {
    const d = embeddedDefault({}).models as Record<string, { kind: string }>;
    expect([...models.chat, ...models.image, ...models.video].sort()).toEqual(Object.keys(d).sort());
    expect(models.chat.length).toBeGreaterThanOrEqual(2);
    expect(models.image.length).toBeGreaterThanOrEqual(1);
    expect(models.video.length).toBeGreaterThanOrEqual(10);
  });

  it('chat: openai chat.completions and responses, anthropic messages and countTokens, genai generateContent', { timeout: 120_000 }, async () => {
    const anthropic = new Anthropic({ baseURL: gw.url, apiKey: key, maxRetries: 0 });
    const genai = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: gw.url } });
    const failures = await eachLimited(
      models.chat,
      2,
      async (model) => {
        const c = await openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hello there' }] });
        expect(c.choices[0].message.content).toBe('You said: Hello there');
        const r = await openai.responses.create({ model, input: 'Hello there' });
        expect(r.output_text).toBe('You said: Hello there');
        const m = await anthropic.messages.create({ model, max_tokens: 50, messages: [{ role: 'user', content: 'Hello there' }] });
        expect(m.content[0]).toMatchObject({ type: 'text', text: 'You said: Hello there' });
        const counted = await anthropic.messages.countTokens({ model, messages: [{ role: 'user', content: 'Hello there' }] });
        expect(counted.input_tokens).toBeGreaterThan(0);
        const g = await genai.models.generateContent({ model, contents: 'Hello there' });
        expect(g.text).toBe('You said: Hello there');
      },
      (m) => m,
    );
    expect(failures).toEqual([]);
  });

  it('images: openai images.generate', { timeout: 120_000 }, async () => {
    const failures = await eachLimited(
      models.image,
      2,
      async (model) => {
        const r = await openai.images.generate({ model, prompt: 'a corgi', n: 1 }).catch((err: unknown) => {
          // An edit-only model refuses to generate, saying so (image-models-every-provider edits with it).
          if (err instanceof OpenAI.APIError && err.status === 400 && /edits images only/.test(err.message)) return null;
          throw err;
        });
        if (r === null) return;
        expect(r.data?.length).toBe(1);
        expect(r.data![0].url ?? r.data![0].b64_json).toBeTruthy();
      },
      (m) => m,
    );
    expect(failures).toEqual([]);
  });

  it('video: openai videos create, retrieve until completed, downloadContent', { timeout: 300_000 }, async () => {
    const skipped: string[] = [];
    const failures = await eachLimited(
      models.video,
      PARALLEL,
      async (model) => {
        let v = await openai.videos.create({ model: model as never, prompt: 'a corgi runs on grass' }).catch(async (err: unknown) => {
          if (!unsupportedMode(err)) throw err;
          // Not from text alone: the first frame is the one image this client can send.
          return openai.videos.create({ model: model as never, prompt: 'the corgi jumps', input_reference: await toFile(PICTURE, 'frame.png', { type: 'image/png' }) }).catch((again: unknown) => {
            if (unsupportedMode(again)) return null;
            throw again;
          });
        });
        if (!v) return void skipped.push(model);
        for (const started = Date.now(); v.status !== 'completed' && v.status !== 'failed'; ) {
          if (Date.now() - started > 60_000) throw new Error(`still ${v.status} after 60 s`);
          await new Promise((r) => setTimeout(r, 100));
          v = await openai.videos.retrieve(v.id);
        }
        expect(v.status, JSON.stringify(v.error)).toBe('completed');
        expect(isMp4(new Uint8Array(await (await openai.videos.downloadContent(v.id)).arrayBuffer()))).toBe(true);
      },
      (m) => m,
    );
    expect(failures).toEqual([]);
    // Only models whose every mode needs more than one first frame (first and last frames, reference images).
    expect(skipped.length).toBeLessThan(models.video.length / 4);
  });

  it('video: genai generateVideos, getVideosOperation until done, the video from its URI', { timeout: 300_000 }, async () => {
    const genai = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: gw.url } });
    const image = { imageBytes: PICTURE.toString('base64'), mimeType: 'image/png' };
    // What a model may take, tried in this order until one is not refused as an unsupported mode.
    const asks: Omit<GenerateVideosParameters, 'model'>[] = [
      { prompt: 'a corgi runs on grass' },
      { prompt: 'the corgi jumps', image },
      { prompt: 'the corgi jumps', image, config: { lastFrame: image } },
      { prompt: 'the corgi jumps', config: { referenceImages: [{ image, referenceType: 'asset' as never }] } },
    ];
    const failures = await eachLimited(
      models.video,
      PARALLEL,
      async (model) => {
        let op: GenerateVideosOperation | undefined;
        const refusals: string[] = [];
        for (const ask of asks) {
          try {
            op = await genai.models.generateVideos({ model, ...ask });
            break;
          } catch (err) {
            if (!unsupportedMode(err)) throw err;
            refusals.push((err as Error).message);
          }
        }
        if (!op) throw new Error(`every request was refused: ${refusals.join(' | ')}`);
        for (const started = Date.now(); !op.done; ) {
          if (Date.now() - started > 60_000) throw new Error('the operation is not done after 60 s');
          await new Promise((r) => setTimeout(r, 100));
          op = await genai.operations.getVideosOperation({ operation: op });
        }
        expect(op.error, JSON.stringify(op.error)).toBeUndefined();
        const uri = op.response!.generatedVideos![0].video!.uri!;
        // The SDK's own download refuses loopback addresses: the same request, with the key.
        const res = await fetch(uri, { headers: { 'x-goog-api-key': key } });
        expect(res.status).toBe(200);
        expect(isMp4(new Uint8Array(await res.arrayBuffer()))).toBe(true);
      },
      (m) => m,
    );
    expect(failures).toEqual([]);
  });
});
