import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI, { toFile } from 'openai';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { usageRows } from '../helpers/images.js';
import { mask, photo } from '../helpers/png.js';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';
import { KLING_SIMULATOR_ACCOUNT } from '../../src/providers/kling/wire.js';
import { sniffImageType } from '../../src/http/image-type.js';

// The image contract for every manifest image provider (Black Forest Labs, Gemini, Imagen,
// DashScope, Kling, MiniMax, Ideogram, Recraft, Stability, fal, Replicate), each a channel of its
// own type against its simulator part, through the gateway with the official OpenAI SDK: generate
// two images (b64_json, and url that downloads), edit where the model edits (with a mask where it
// takes one), a failure and a content-safety refusal each in OpenAI's error shape with the credit
// returned. BFL, DashScope, Kling, fal and Replicate run through their polling.

interface Row {
  type: string;
  model: string;
  channel: (sim: string) => Record<string, unknown>;
  /** The model's edit: none, without a mask, or with one. */
  edit: 'none' | 'plain' | 'mask';
  /** A model of the same channel that edits, when `model` does not. */
  editModel?: string;
}

const ROWS: Row[] = [
  { type: 'bfl', model: 'flux-pro-1.1', channel: (sim) => ({ base_url: `${sim}/bfl`, api_key: 'bfl-contract-secret' }), edit: 'plain', editModel: 'flux-kontext-pro' },
  { type: 'gemini', model: 'gemini-2.5-flash-image', channel: (sim) => ({ base_url: sim, api_key: 'gemini-contract-secret' }), edit: 'plain' },
  { type: 'gemini', model: 'imagen-4.0-fast-generate-001', channel: (sim) => ({ base_url: sim, api_key: 'imagen-contract-secret' }), edit: 'none' },
  { type: 'dashscope', model: 'wan2.2-t2i-flash', channel: (sim) => ({ base_url: sim, api_key: 'sk-dashscope-contract-secret' }), edit: 'plain', editModel: 'wan2.5-i2i-preview' },
  { type: 'kling', model: 'kling-v2', channel: (sim) => ({ base_url: sim, api_key: KLING_SIMULATOR_ACCOUNT.apiKey, api_secret: KLING_SIMULATOR_ACCOUNT.apiSecret }), edit: 'plain' },
  { type: 'minimax', model: 'image-01', channel: (sim) => ({ base_url: sim, api_key: 'mm-contract-secret' }), edit: 'plain' },
  { type: 'ideogram', model: 'ideogram-v3', channel: (sim) => ({ base_url: sim, api_key: 'ideo-contract-secret' }), edit: 'mask' },
  { type: 'recraft', model: 'recraftv3', channel: (sim) => ({ base_url: `${sim}/recraft`, api_key: 'rc-contract-secret' }), edit: 'mask' },
  { type: 'stability', model: 'stable-image-core', channel: (sim) => ({ base_url: sim, api_key: 'sk-contract-stability-secret' }), edit: 'mask' },
  { type: 'fal', model: 'fal-ai/flux/dev', channel: (sim) => ({ base_url: sim, api_key: 'fal-contract-secret' }), edit: 'mask', editModel: 'fal-ai/flux-general/inpainting' },
  { type: 'replicate', model: 'black-forest-labs/flux-schnell', channel: (sim) => ({ base_url: sim, api_key: 'r8-contract-secret' }), edit: 'plain', editModel: 'black-forest-labs/flux-kontext-pro' },
];

const CREDIT = 1_000_000;
const isImage = (b: Buffer) => !!sniffImageType(b);

describe('image contract: manifest providers on their simulator parts', () => {
  let sim: Simulator;
  let gw: TestGateway;
  const client = (key: string) => new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0, timeout: 30_000 });
  beforeAll(async () => {
    sim = await startSimulator({ videoSeconds: 0.5 });
    const models: Record<string, unknown> = {};
    const channels = ROWS.map((r) => {
      const ids = [r.model, ...(r.editModel ? [r.editModel] : [])];
      for (const id of ids) models[id] = { kind: 'image', owned_by: r.type, price: { per_image: 0.01 }, wait: { interval_ms: 50, timeout_s: 20 } };
      return { name: `${r.type}-${r.model.replace(/[^a-z0-9-]/gi, '-')}`, type: r.type, models: ids, ...r.channel(sim.url) };
    });
    gw = await startGateway({ simulator: { embedded: false }, channels, models });
  });
  afterAll(async () => {
    await gw?.close();
    await sim?.close();
  });

  describe.each(ROWS)('$type $model', (r) => {
    it('generates two images, as b64_json and as a url that downloads, and charges them', async () => {
      const { id, key } = await gw.createKey({ creditMicros: CREDIT });
      const b64 = await client(key).images.generate({ model: r.model, prompt: 'a red boat', n: 2, response_format: 'b64_json' });
      expect(b64.data).toHaveLength(2);
      for (const d of b64.data!) expect(isImage(Buffer.from(d.b64_json!, 'base64'))).toBe(true);
      const url = await client(key).images.generate({ model: r.model, prompt: 'a blue boat', n: 2, response_format: 'url' });
      const file = await fetch(url.data![1].url!);
      expect(file.status).toBe(200);
      expect(isImage(Buffer.from(await file.arrayBuffer()))).toBe(true);
      expect(await gw.services.credit.spendable(id)).toBe(CREDIT - 4 * 10_000);
    });

    it.runIf(r.edit !== 'none')(`edits an uploaded image${r.edit === 'mask' ? ' with a mask' : ''}`, async () => {
      const { key } = await gw.createKey({ creditMicros: CREDIT });
      const edited = await client(key).images.edit({
        model: r.editModel ?? r.model,
        prompt: 'add a hat',
        image: await toFile(photo(96, 64), 'photo.png', { type: 'image/png' }),
        ...(r.edit === 'mask' ? { mask: await toFile(mask(96, 64), 'mask.png', { type: 'image/png' }) } : {}),
        response_format: 'b64_json',
      });
      expect(isImage(Buffer.from(edited.data![0].b64_json!, 'base64'))).toBe(true);
    });

    it.each([
      { prompt: 'a boat [fail]', status: 502, type: 'server_error', code: 'upstream_error' },
      { prompt: 'a boat [moderation]', status: 400, type: 'invalid_request_error', code: 'content_policy_violation' },
    ])('answers "$prompt" with $status $code in OpenAI’s shape and returns the credit', async ({ prompt, status, type, code }) => {
      const { id, key } = await gw.createKey({ creditMicros: CREDIT });
      const err = await client(key)
        .images.generate({ model: r.model, prompt })
        .then(() => null, (e: unknown) => e as InstanceType<typeof OpenAI.APIError>);
      expect(err).toBeInstanceOf(OpenAI.APIError);
      expect(err!.status).toBe(status);
      expect(err!.error).toMatchObject({ message: expect.any(String), type, code });
      expect(await gw.services.credit.spendable(id)).toBe(CREDIT);
      const rows = await usageRows(gw, id);
      expect(rows.at(-1)).toMatchObject({ cost_micros: 0 });
    });
  });

  it('shows no channel key in any answer or log line', () => {
    for (const r of ROWS) {
      const secret = r.channel('http://sim').api_key as string;
      if (r.type !== 'kling') expect(gw.logs.join('\n')).not.toContain(secret);
    }
  });
});
