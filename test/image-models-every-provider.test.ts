import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI, { toFile } from 'openai';
import { generateImage } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
import { startGateway, type TestGateway } from './helpers/gateway.js';
import { mask, photo } from './helpers/png.js';
import { embeddedDefault } from '../src/config-file/defaults.js';
import { sniffImageType } from '../src/http/image-type.js';

// The embedded default's models and channels, offline: GET /v1/models lists image models of at
// least eight providers; every one answers the official OpenAI SDK's images.generate with real
// image bytes (base64, and a URL that downloads); every one that edits answers the SDK's
// images.edit and the Vercel AI SDK's generateImage (generate and edit), with a mask where it takes
// one. A model that does not edit (or takes no mask) says so: 400 unsupported_parameter; so does an
// edit-only model asked to generate, naming the provider's models that do.

interface Listed {
  id: string;
  owned_by: string;
}

/** Runs `f` over `items` a few at a time (some models are queued upstream). */
async function each<T>(items: T[], f: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += 4) await Promise.all(items.slice(i, i + 4).map(f));
}

const isImage = (b: Buffer | Uint8Array) => !!sniffImageType(Buffer.from(b));

describe('image models of the embedded default, through both SDKs', () => {
  let gw: TestGateway;
  let openai: OpenAI;
  let models: Listed[];
  let key: string;
  /** Models that answer generations with a 400 saying they edit only (each must then edit). */
  const editOnly = new Set<string>();
  beforeAll(async () => {
    const d = embeddedDefault({});
    gw = await startGateway({ channels: d.channels, models: d.models });
    key = (await gw.createKey({ creditMicros: null })).key;
    openai = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0, timeout: 60_000 });
    const list = await openai.models.list();
    models = (list.data as unknown as (Listed & { supported_endpoint_types: string[] })[]).filter((m) => m.supported_endpoint_types.includes('image-generation'));
  });
  afterAll(async () => gw?.close());

  it('lists image models of at least eight distinct providers', () => {
    const owners = new Set(models.map((m) => m.owned_by));
    expect(owners.size, [...owners].join(', ')).toBeGreaterThanOrEqual(8);
  });

  // Some forty models, the queued ones polled, on a machine shared with other suites.
  it('every image model answers images.generate with image bytes, as b64_json and as url', { timeout: 120_000 }, async () => {
    const failures: string[] = [];
    await each(models, async ({ id }) => {
      try {
        const refused = await openai.images.generate({ model: id, prompt: `a lighthouse for ${id}`, response_format: 'b64_json' }).then(
          () => null,
          (err: { status?: number; code?: string; message: string }) => {
            // An edit-only model says so, and names the provider's models that generate.
            if (err.status === 400 && err.code === 'unsupported_parameter' && /edits images only/.test(err.message) && /models that generate from text: \S/.test(err.message)) return err;
            throw err;
          },
        );
        if (refused) {
          editOnly.add(id);
          return;
        }
        const b64 = await openai.images.generate({ model: id, prompt: `a lighthouse for ${id}`, response_format: 'b64_json' });
        if (!isImage(Buffer.from(b64.data![0].b64_json!, 'base64'))) throw new Error('b64_json is not an image');
        const url = await openai.images.generate({ model: id, prompt: `a harbour for ${id}`, response_format: 'url' });
        const res = await fetch(url.data![0].url!);
        if (res.status !== 200 || !isImage(Buffer.from(await res.arrayBuffer()))) throw new Error(`its url answered ${res.status} without an image`);
      } catch (err) {
        failures.push(`${id}: ${(err as Error).message}`);
      }
    });
    expect(failures).toEqual([]);
  });

  it('every model that edits answers images.edit and the AI SDK (generate and edit); the others say they do not', { timeout: 120_000 }, async () => {
    const ai = createOpenAI({ apiKey: key, baseURL: `${gw.url}/v1` });
    const failures: string[] = [];
    const editors = new Set<string>();
    const masked = new Set<string>();
    await each(models, async ({ id }) => {
      try {
        if (!editOnly.has(id)) {
          const generated = await generateImage({ model: ai.image(id), prompt: `a kite for ${id}`, maxRetries: 0 });
          if (!isImage(generated.image.uint8Array)) throw new Error('the AI SDK got no image');
        }
        for (const withMask of [false, true]) {
          let edited: OpenAI.ImagesResponse;
          try {
            edited = await openai.images.edit({
              model: id,
              prompt: 'add a red hat',
              image: await toFile(photo(96, 64), 'photo.png', { type: 'image/png' }),
              ...(withMask ? { mask: await toFile(mask(96, 64), 'mask.png', { type: 'image/png' }) } : {}),
              response_format: 'b64_json',
            });
          } catch (err) {
            // Not an editor (or no mask): a clean 400 naming what the model can do.
            const e = err as { status?: number; code?: string; param?: string; message: string };
            // An inpainting model edits only with a mask: it says so, and the masked edit follows.
            if (e.status === 400 && e.param === 'mask' && !withMask) continue;
            if (e.status === 400 && e.code === 'unsupported_parameter' && /cannot edit/.test(e.message) && (withMask || !editOnly.has(id))) break;
            throw err;
          }
          if (!isImage(Buffer.from(edited.data![0].b64_json!, 'base64'))) throw new Error('images.edit returned no image');
          (withMask ? masked : editors).add(id);
          const viaAi = await generateImage({
            model: ai.image(id),
            prompt: { text: 'add a red hat', images: [photo(96, 64)], ...(withMask ? { mask: mask(96, 64) } : {}) },
            maxRetries: 0,
          });
          if (!isImage(viaAi.image.uint8Array)) throw new Error(`the AI SDK's edit${withMask ? ' with a mask' : ''} got no image`);
        }
      } catch (err) {
        failures.push(`${id}: ${(err as Error).message}`);
      }
    });
    expect(failures).toEqual([]);
    // Editors of several providers, some with a mask.
    const owners = (ids: Set<string>) => new Set(models.filter((m) => ids.has(m.id)).map((m) => m.owned_by)).size;
    expect(owners(editors)).toBeGreaterThanOrEqual(6);
    expect(owners(masked)).toBeGreaterThanOrEqual(3);
    // Edit-only models of the default: Kling's restyle, fal's Kontext and inpainting, Replicate's FLUX Fill, Wan 2.5's edit.
    expect([...editOnly].sort()).toEqual(['black-forest-labs/flux-fill-pro', 'fal-ai/flux-general/inpainting', 'fal-ai/flux-pro/kontext', 'kling-v2-new', 'wan2.5-i2i-preview']);
    for (const id of editOnly) expect(editors.has(id) || masked.has(id), id).toBe(true);
  });
});
