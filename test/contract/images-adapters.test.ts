import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import OpenAI, { toFile } from 'openai';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { usageRows } from '../helpers/images.js';
import { expectPng, mask, photo } from '../helpers/png.js';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';

// The contract every images adapter passes against its simulator part, over real HTTP through the
// gateway with the official OpenAI SDK: generate (URLs that download, and base64), edit an
// uploaded PNG, a mask where the provider takes one (else a clean 400 that charges nothing), an
// upstream failure surfacing in OpenAI's error shape with nothing charged, and no channel key in
// any answer or log line. A new images adapter is finished when it is added to ADAPTERS below and
// this suite passes.

interface ImagesCase {
  /** The channel type (the provider's folder). */
  type: string;
  /** The model clients ask for, and its price per image in micro-dollars. */
  model: string;
  perImage: number;
  /** The channel without its name and models (base_url relative to the simulator, credentials, model_map). */
  channel: (simUrl: string) => Record<string, unknown>;
  /** The simulator part's route name for a generation (fault matching). */
  generateRoute: string;
  /** Whether the provider edits with a mask. */
  mask: boolean;
}

const ADAPTERS: ImagesCase[] = [
  {
    type: 'simulator',
    model: 'sim-image',
    perImage: 20_000,
    channel: (sim) => ({ base_url: sim }),
    generateRoute: 'openai.images.generate',
    mask: true,
  },
  {
    type: 'openai',
    model: 'oa-image',
    perImage: 40_000,
    channel: (sim) => ({ base_url: `${sim}/v1`, api_key: 'sk-contract-openai-images-secret', model_map: { 'oa-image': 'gpt-image-1' } }),
    generateRoute: 'openai.images.generate',
    mask: true,
  },
  {
    type: 'ark',
    model: 'doubao-seedream-4-0-250828',
    perImage: 30_000,
    channel: (sim) => ({ base_url: sim, api_key: 'ark-contract-images-secret' }),
    generateRoute: 'ark.images.generate',
    // Seedream edits by image-to-image generation; it has no mask.
    mask: false,
  },
];


const CREDIT = 1_000_000;

describe('images adapter contract', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ port: 0 });
  });
  afterAll(async () => sim.close());

  describe.each(ADAPTERS)('$type', (c) => {
    let gw: TestGateway;
    const client = (key: string) => new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    beforeAll(async () => {
      gw = await startGateway({
        simulator: { embedded: false },
        channels: [{ name: c.type, type: c.type, models: [c.model], ...c.channel(sim.url) }],
        models: { [c.model]: { kind: 'image', owned_by: c.type, price: { per_image: c.perImage / 1e6 } } },
      });
    });
    afterEach(async () => {
      await fetch(`${sim.url}/__sim/faults`, { method: 'DELETE' });
    });
    afterAll(async () => gw.close());

    it('generates URLs that download as PNGs of the requested size, charged per image in one ledger row', async () => {
      const { id, key } = await gw.createKey({ creditMicros: CREDIT });
      const res = await client(key).images.generate({ model: c.model, prompt: 'a lighthouse at dusk', n: 2, size: '64x48', response_format: 'url' });
      expect(res.data).toHaveLength(2);
      for (const d of res.data!) {
        const img = await fetch(d.url!);
        expect(img.status).toBe(200);
        expectPng(Buffer.from(await img.arrayBuffer()), 64, 48);
      }
      expect(await gw.services.credit.spendable(id)).toBe(CREDIT - 2 * c.perImage);
      const rows = await usageRows(gw, id);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ model: c.model, channel: c.type, endpoint: 'images.generations', status: 200, output_units: 2, cost_micros: 2 * c.perImage });
    });

    it('generates base64 PNGs', async () => {
      const { key } = await gw.createKey();
      const res = await client(key).images.generate({ model: c.model, prompt: 'three red apples', size: '40x30', response_format: 'b64_json' });
      expect(res.data).toHaveLength(1);
      expectPng(Buffer.from(res.data![0].b64_json!, 'base64'), 40, 30);
    });

    it('edits an uploaded PNG, charged per image in one ledger row', async () => {
      const { id, key } = await gw.createKey({ creditMicros: CREDIT });
      const res = await client(key).images.edit({ model: c.model, image: await toFile(photo(24, 20), 'photo.png', { type: 'image/png' }), prompt: 'a watercolour version', size: '36x24', response_format: 'b64_json' });
      expect(res.data).toHaveLength(1);
      expectPng(Buffer.from(res.data![0].b64_json!, 'base64'), 36, 24);
      expect(await gw.services.credit.spendable(id)).toBe(CREDIT - c.perImage);
      const rows = await usageRows(gw, id);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ endpoint: 'images.edits', status: 200, cost_micros: c.perImage });
    });

    it(c.mask ? 'edits with a mask' : 'refuses a mask with a clean 400 naming it, charging nothing', async () => {
      const { id, key } = await gw.createKey({ creditMicros: CREDIT });
      const form = new FormData();
      form.set('model', c.model);
      form.set('prompt', 'add a red balloon');
      form.set('size', '32x32');
      form.set('response_format', 'b64_json');
      form.set('image', new Blob([photo(32, 32)], { type: 'image/png' }), 'room.png');
      form.set('mask', new Blob([mask(32, 32)], { type: 'image/png' }), 'mask.png');
      const res = await fetch(`${gw.url}/v1/images/edits`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
      const body = (await res.json()) as any;
      if (c.mask) {
        expect(res.status, JSON.stringify(body)).toBe(200);
        expectPng(Buffer.from(body.data[0].b64_json, 'base64'), 32, 32);
        expect(await gw.services.credit.spendable(id)).toBe(CREDIT - c.perImage);
      } else {
        expect(res.status).toBe(400);
        expect(body.error).toMatchObject({ type: 'invalid_request_error', code: 'unsupported_parameter', param: 'mask' });
        expect(await gw.services.credit.spendable(id)).toBe(CREDIT);
      }
    });

    it.each([
      { status: 429, answer: 429, type: 'rate_limit_error', code: 'rate_limit_exceeded' },
      { status: 500, answer: 502, type: 'server_error', code: 'upstream_error' },
    ])('surfaces an upstream $status as $answer in OpenAI’s error shape and charges nothing', async ({ status, answer, type, code }) => {
      const { id, key } = await gw.createKey({ creditMicros: CREDIT });
      await fetch(`${sim.url}/__sim/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ match: c.generateRoute, kind: 'status', status, count: 10 }) });
      const err = await client(key)
        .images.generate({ model: c.model, prompt: 'x', size: '16x16' })
        .then(() => null, (e: unknown) => e as InstanceType<typeof OpenAI.APIError>);
      expect(err).toBeInstanceOf(OpenAI.APIError);
      expect(err!.status).toBe(answer);
      expect(err!.error).toMatchObject({ message: expect.any(String), type, code });
      expect(await gw.services.credit.spendable(id)).toBe(CREDIT);
    });

    it('answers a moderation refusal in OpenAI’s error shape and charges nothing', async () => {
      const { id, key } = await gw.createKey({ creditMicros: CREDIT });
      const err = await client(key)
        .images.generate({ model: c.model, prompt: 'a harbour at night [sim:sensitive]', size: '16x16' })
        .then(() => null, (e: unknown) => e as InstanceType<typeof OpenAI.APIError>);
      expect(err).toBeInstanceOf(OpenAI.APIError);
      expect(err!.status).toBe(400);
      expect(err!.error).toMatchObject({ message: expect.stringMatching(/safety|sensitive/i), code: 'content_policy_violation' });
      expect(await gw.services.credit.spendable(id)).toBe(CREDIT);
    });

    const secret = c.channel('http://sim').api_key;
    it.runIf(typeof secret === 'string')('shows no channel key in any answer or log line', async () => {
      const { key } = await gw.createKey();
      const res = await fetch(`${gw.url}/v1/images/generations`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: c.model, prompt: 'x', size: '16x16' }) });
      expect(res.status).toBe(200);
      expect(await res.text()).not.toContain(String(secret));
      expect(gw.logs.join('\n')).not.toContain(String(secret));
    });
  });
});
