import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SEEDANCE_MODELS, SIMULATOR_MODELS } from '../src/config-file/defaults.js';
import { validateConfig } from '../src/config-file/loader.js';
import { videoQuote } from '../src/limits/pricing.js';
import type { ModelConfig } from '../src/config/schema.js';
import { WAN_DEFAULT_MODELS } from '../src/providers/dashscope/models.js';
import { startGateway, usageRowsOf, type TestGateway } from './helpers/gateway.js';
import { balanceOf, createAndFinish, providerRig, type ProviderRig } from './helpers/provider-video.js';
import { IMG, createTask, eventually, simVideoConfig } from './helpers/video.js';
import { startSimulator, type Simulator } from '../src/simulator/server.js';

// Price rules as data: a base unit and factors by the request's values, the same rule for the hold
// (from the request) and the settle (from what the provider reported), each ledger row saying what
// it was billed by; and the prices and capabilities a client reads from GET /v1/models.

const auth = (key: string) => ({ authorization: `Bearer ${key}` });

async function holdOf(gw: TestGateway, keyId: string): Promise<number> {
  const r = await gw.services.store.db.selectFrom('reservations').select('amount_micros').where('key_id', '=', keyId).orderBy('created_at', 'desc').executeTakeFirstOrThrow();
  return Number(r.amount_micros);
}

async function settleRow(gw: TestGateway, keyId: string) {
  await eventually(async () => (await usageRowsOf(gw.services, keyId)).some((r) => r.endpoint === 'video.settle'), 10_000, 'the settle row');
  return (await usageRowsOf(gw.services, keyId)).find((r) => r.endpoint === 'video.settle')!;
}

describe('price rules per second and per video (Wan on a dashscope channel)', { timeout: 120_000 }, () => {
  let rig: ProviderRig;
  beforeAll(async () => {
    rig = await providerRig('dashscope', {
      'wan2.5-t2v-preview': {
        ...WAN_DEFAULT_MODELS['wan2.5-t2v-preview'],
        price: { per_second: { '480p': 0.05, '720p': 0.1, '1080p': 0.15 }, factors: [{ when: { duration: 10 }, multiply: 0.9, label: 'long clip' }, { when: { mode: 'text', resolution: ['1080p'] }, multiply: 1.2 }] },
      },
      'wan2.5-i2v-preview': { ...WAN_DEFAULT_MODELS['wan2.5-i2v-preview'], price: { per_video: 0.3, factors: [{ when: { resolution: '480p' }, multiply: 0.5 }] } },
    });
  });
  afterAll(async () => rig?.close());

  it('holds and settles seconds × rate × every matching factor, and the row says so', async () => {
    const { id, key } = await rig.gw.createKey({ creditMicros: 10_000_000 });
    const created = await createTask(rig.gw.url, key, { model: 'wan2.5-t2v-preview', prompt: 'a corgi', duration: 10, resolution: '1080p' });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    // 10 s × $0.15 × 0.9 × 1.2 = $1.62
    expect(await holdOf(rig.gw, id)).toBe(1_620_000);
    const row = await settleRow(rig.gw, id);
    expect(Number(row.cost_micros)).toBe(1_620_000);
    expect(row.billed_by).toBe('10 s × $0.15/s (1080p) × 0.9 (long clip) × 1.2 (mode text, resolution 1080p)');
    expect(await balanceOf(rig.gw, id)).toBe(10_000_000 - 1_620_000);
  });

  it('applies no factor the request does not match', async () => {
    const { id, key } = await rig.gw.createKey({ creditMicros: 10_000_000 });
    const done = await createAndFinish(rig.gw, key, { model: 'wan2.5-t2v-preview', prompt: 'a corgi', duration: 5, resolution: '720p' });
    expect(done.status).toBe('SUCCESS');
    const row = await settleRow(rig.gw, id);
    expect(Number(row.cost_micros)).toBe(500_000);
    expect(row.billed_by).toBe('5 s × $0.1/s (720p)');
  });

  it('bills a per-video model one video whatever the seconds, with its resolution factor', async () => {
    const { id, key } = await rig.gw.createKey({ creditMicros: 10_000_000 });
    const created = await createTask(rig.gw.url, key, { model: 'wan2.5-i2v-preview', prompt: 'wave', image: IMG(1), resolution: '480p', duration: 10 });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(await holdOf(rig.gw, id)).toBe(150_000);
    const row = await settleRow(rig.gw, id);
    expect(Number(row.cost_micros)).toBe(150_000);
    expect(row.billed_by).toBe('1 video × $0.3 × 0.5 (resolution 480p)');
  });

  it('shows the same capabilities and pricing a create is judged and billed by', async () => {
    const { key } = await rig.gw.createKey();
    const m = (await (await fetch(`${rig.gw.url}/v1/models/wan2.5-t2v-preview`, { headers: auth(key) })).json()) as any;
    expect(m).toMatchObject({ id: 'wan2.5-t2v-preview', object: 'model', supported_endpoint_types: ['openai-video'] });
    expect(m.capabilities).toMatchObject({ modes: ['text'], durations: [5, 10], audio: false, max_images: {} });
    expect(m.pricing).toEqual({ currency: 'USD', per_second: { '480p': 0.05, '720p': 0.1, '1080p': 0.15 }, factors: [{ when: { duration: 10 }, multiply: 0.9, label: 'long clip' }, { when: { mode: 'text', resolution: ['1080p'] }, multiply: 1.2 }] });
    const outside = await createTask(rig.gw.url, key, { model: 'wan2.5-t2v-preview', prompt: 'a corgi', duration: 7 });
    expect(outside.status).toBe(400);
    expect(outside.body.message).toContain(`one of ${m.capabilities.durations.join(', ')}`);
    const resolution = await createTask(rig.gw.url, key, { model: 'wan2.5-t2v-preview', prompt: 'a corgi', resolution: '4k' });
    expect(resolution.status).toBe(400);
    expect(resolution.body.message).toContain(m.capabilities.resolutions.join(', '));
    const i2v = (await (await fetch(`${rig.gw.url}/v1/models/wan2.5-i2v-preview`, { headers: auth(key) })).json()) as any;
    expect(i2v.capabilities).toMatchObject({ modes: ['first_frame'], max_images: { first_frame: 1 } });
  });
});

describe('price rules on the embedded simulator: tokens, images, chat; models with capabilities', { timeout: 120_000 }, () => {
  let gw: TestGateway;
  const video = 'doubao-seedance-1-0-pro-250528';
  // Of the Seedance family only 1.5 pro renders sound.
  const sound = 'doubao-seedance-1-5-pro-251215';
  beforeAll(async () => {
    gw = await startGateway(
      {
        models: {
          ...SIMULATOR_MODELS,
          ...SEEDANCE_MODELS,
          [video]: { ...SEEDANCE_MODELS[video], price: { per_million_tokens: 2.5, factors: [{ when: { audio: true }, multiply: 1.5 }] } },
          [sound]: { ...SEEDANCE_MODELS[sound], price: { per_million_tokens: 2.4, factors: [{ when: { audio: true }, multiply: 1.5 }] } },
          'sim-image': { ...SIMULATOR_MODELS['sim-image'], price: { per_image: { '256x256': 0.01, '1024x1024': 0.02 }, factors: [{ when: { size: '1024x1024', n: [2, 3] }, multiply: 0.75, label: 'batch' }] } },
        },
      },
      { noPoller: true },
    );
  });
  afterAll(async () => gw?.close());

  const pollUntilDone = async (taskId: string) => {
    const { repo, poller } = gw.services.tasks;
    for (let i = 0; i < 200; i++) {
      const row = (await repo.get(taskId))!;
      if (row.status === 'SUCCESS' || row.status === 'FAILURE') return row;
      await poller.pollTask(row);
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`task ${taskId} did not finish`);
  };

  it('holds the estimated tokens and settles the reported ones, both × the audio factor', async () => {
    const { id, key } = await gw.createKey({ creditMicros: 50_000_000 });
    const created = await createTask(gw.url, key, { model: sound, prompt: 'a corgi sings', generate_audio: true, duration: 5, resolution: '720p' });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const hold = await holdOf(gw, id);
    const row = await pollUntilDone(created.body.data.task_id);
    expect(row.status).toBe('SUCCESS');
    const tokens = Number(JSON.parse(row.data).usage.total_tokens);
    expect(tokens).toBeGreaterThan(0);
    const settle = await settleRow(gw, id);
    expect(Number(settle.cost_micros)).toBe(Math.ceil(tokens * 2.4 * 1.5 - 1e-6));
    expect(hold).toBeGreaterThanOrEqual(Number(settle.cost_micros));
    expect(settle.billed_by).toBe(`${tokens} tokens × $2.4/M × 1.5 (audio)`);

    // Without audio: no factor.
    const { id: id2, key: key2 } = await gw.createKey({ creditMicros: 50_000_000 });
    const plain = await createTask(gw.url, key2, { model: sound, prompt: 'a corgi', duration: 5, resolution: '720p' });
    await pollUntilDone(plain.body.data.task_id);
    const plainRow = await settleRow(gw, id2);
    expect(Number(plainRow.cost_micros)).toBe(Math.ceil(tokens * 2.4 - 1e-6));
  });

  it('refuses sound on a Seedance model that renders none, as its capabilities say', async () => {
    const { key } = await gw.createKey({ creditMicros: 50_000_000 });
    const refused = await createTask(gw.url, key, { model: video, prompt: 'a corgi sings', generate_audio: true });
    expect(refused.status).toBe(400);
    expect(refused.body.data).toBeNull();
    expect(refused.body.message).toContain(`generate_audio is not supported by model "${video}"`);
    // Saying no sound is no change.
    expect((await createTask(gw.url, key, { model: video, prompt: 'a corgi', generate_audio: false })).status).toBe(200);
  });

  it('bills images by the size table and the n factor, hold and settle alike', async () => {
    const { id, key } = await gw.createKey({ creditMicros: 5_000_000 });
    const res = await fetch(`${gw.url}/v1/images/generations`, {
      method: 'POST',
      headers: { ...auth(key), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sim-image', prompt: 'a red square', n: 2, size: '1024x1024' }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const rows = await usageRowsOf(gw.services, id);
    expect(rows).toHaveLength(1);
    // 2 × $0.02 × 0.75
    expect(Number(rows[0].cost_micros)).toBe(30_000);
    expect(rows[0].billed_by).toBe('2 images × $0.02 (1024x1024) × 0.75 (batch)');
    const single = await fetch(`${gw.url}/v1/images/generations`, {
      method: 'POST',
      headers: { ...auth(key), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sim-image', prompt: 'a red square', size: '256x256' }),
    });
    expect(single.status).toBe(200);
    const after = await usageRowsOf(gw.services, id);
    expect(Number(after[1].cost_micros)).toBe(10_000);
    expect(after[1].billed_by).toBe('1 image × $0.01 (256x256)');
  });

  it('records the tokens and rates of a chat request', async () => {
    const { id, key } = await gw.createKey({ creditMicros: 5_000_000 });
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...auth(key), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: 'hello' }] }),
    });
    const body = (await res.json()) as any;
    expect(res.status).toBe(200);
    await gw.services.credit.flush();
    const [row] = await usageRowsOf(gw.services, id);
    const { prompt_tokens: input, completion_tokens: output } = body.usage;
    expect(row.billed_by).toBe(`${input} input tokens × $0.5/M + ${output} output tokens × $1.5/M`);
    expect(Number(row.cost_micros)).toBe(Math.ceil(input * 0.5 + output * 1.5));
  });

  it('lists capabilities and pricing only when asked, and refuses an unknown include', async () => {
    const { key } = await gw.createKey();
    const plain = (await (await fetch(`${gw.url}/v1/models`, { headers: auth(key) })).json()) as any;
    for (const m of plain.data) expect(Object.keys(m).sort()).toEqual(['created', 'id', 'object', 'owned_by', 'supported_endpoint_types']);
    const full = (await (await fetch(`${gw.url}/v1/models?include=capabilities,pricing`, { headers: auth(key) })).json()) as any;
    expect(full.data.map((m: any) => m.id)).toEqual(plain.data.map((m: any) => m.id));
    const byId = Object.fromEntries(full.data.map((m: any) => [m.id, m]));
    expect(byId['sim-chat'].capabilities).toEqual({ formats: ['openai-chat', 'openai-responses', 'anthropic-messages', 'gemini-generate-content'] });
    expect(byId['sim-chat'].pricing).toEqual({ currency: 'USD', input_per_million: 0.5, output_per_million: 1.5 });
    expect(byId[video].capabilities).toMatchObject({ modes: ['text', 'first_frame'], durations: [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12], resolutions: ['480p', '720p', '1080p'], audio: false, max_images: { first_frame: 1 } });
    expect(byId[sound].capabilities).toMatchObject({ durations: [4, 5, 6, 7, 8, 9, 10, 11, 12], audio: true });
    // Every Seedance model the embedded default offers: sound on 1.5 only.
    for (const id of Object.keys(SEEDANCE_MODELS)) expect(byId[id].capabilities.audio, id).toBe(id.includes('seedance-1-5'));
    expect(byId[video].pricing).toEqual({ currency: 'USD', per_million_tokens: 2.5, factors: [{ when: { audio: true }, multiply: 1.5 }] });
    expect(byId['sim-image'].capabilities.max_n).toBeGreaterThan(0);
    const one = (await (await fetch(`${gw.url}/v1/models/${video}`, { headers: auth(key) })).json()) as any;
    expect(one).toEqual(byId[video]);
    const pricingOnly = (await (await fetch(`${gw.url}/v1/models?include=pricing`, { headers: auth(key) })).json()) as any;
    expect(Object.keys(pricingOnly.data[0]).sort()).toEqual(['created', 'id', 'object', 'owned_by', 'pricing', 'supported_endpoint_types']);
    const bad = await fetch(`${gw.url}/v1/models?include=capabilities,price`, { headers: auth(key) });
    expect(bad.status).toBe(400);
    const err = (await bad.json()) as any;
    expect(err.error.message).toContain('capabilities, pricing');
    expect(err.error.message).toContain('"price"');
  });

  it('reads a task it gave up on again: a late success is delivered, charged and logged; a late failure ends the reads', async () => {
    const sim = gw.services.simulator!;
    await simVideoConfig(sim.url, { video_seconds: 1.5 });
    try {
      const { id, key } = await gw.createKey({ creditMicros: 50_000_000 });
      const { repo, poller } = gw.services.tasks;
      const ids: string[] = [];
      for (const prompt of ['a slow corgi', 'a slow corgi [fail]']) {
        const created = await createTask(gw.url, key, { model: video, prompt, duration: 5, resolution: '720p' });
        expect(created.status, JSON.stringify(created.body)).toBe(200);
        ids.push(created.body.data.task_id);
      }
      // Both are past their deadline at the first poll, while the provider still runs them.
      await gw.services.store.db.updateTable('tasks').set({ deadline_at: Date.now() - 1 }).where('task_id', 'in', ids).execute();
      for (const taskId of ids) {
        const after = await poller.pollTask((await repo.get(taskId))!);
        expect(after.status).toBe('FAILURE');
        expect(after.fail_reason).toMatch(/^timeout: /);
      }
      // Both holds released: the balance is whole again.
      expect(await balanceOf(gw, id)).toBe(50_000_000);

      await new Promise((r) => setTimeout(r, 1_800));
      const later = Date.now() + 10 * 60_000;
      await poller.lateReads(later);
      await poller.lateReads(later);

      const [ok, failed] = await Promise.all(ids.map(async (t) => (await repo.get(t))!));
      expect(ok.status).toBe('SUCCESS');
      expect(ok.next_poll_at).toBe(0);
      const read = await fetch(`${gw.url}/v1/video/generations/${ok.task_id}`, { headers: auth(key) });
      expect(((await read.json()) as any).data.status).toBe('SUCCESS');
      const tokens = Number(JSON.parse(ok.data).usage.total_tokens);
      const rows = (await usageRowsOf(gw.services, id)).filter((r) => r.endpoint === 'video.settle');
      // The two timeout rows (504, nothing charged) and one late success.
      expect(rows.map((r) => Number(r.status)).sort()).toEqual([200, 504, 504]);
      const late = rows.find((r) => Number(r.status) === 200)!;
      expect(Number(late.cost_micros)).toBe(Math.ceil(tokens * 2.5));
      expect(late.billed_by).toBe(`late success: ${tokens} tokens × $2.5/M`);
      expect(await balanceOf(gw, id)).toBe(50_000_000 - Math.ceil(tokens * 2.5));
      const events = await gw.services.store.db.selectFrom('task_events').selectAll().where('task_id', '=', ok.task_id).orderBy('id').execute();
      expect(events.at(-1)).toMatchObject({ from_status: 'FAILURE', to_status: 'SUCCESS' });
      expect(events.at(-1)!.detail).toContain('late success');

      // The provider's failure ends the late reads; nothing is charged for it.
      expect(failed.status).toBe('FAILURE');
      expect(failed.next_poll_at).toBe(0);
      expect(failed.fail_reason).toMatch(/^timeout: /);
    } finally {
      await simVideoConfig(sim.url, { video_seconds: 0.3 });
    }
  });
});

describe('image capabilities and pricing agree with what a create accepts and costs (Imagen on a gemini channel)', { timeout: 120_000 }, () => {
  let sim: Simulator;
  let gw: TestGateway;
  const model = 'imagen-4.0-generate-001';
  beforeAll(async () => {
    sim = await startSimulator({ port: 0 });
    gw = await startGateway({
      simulator: { embedded: false },
      channels: [{ name: 'gemini', type: 'gemini', base_url: sim.url, api_key: 'gemini-test-secret', models: [model] }],
      models: { [model]: { kind: 'image', price: { per_image: 0.04, factors: [{ when: { size: '2K' }, multiply: 1.5, label: '2K' }] } } },
    });
  });
  afterAll(async () => {
    await gw?.close();
    await sim?.close();
  });

  it('shows the sizes and n a create is judged by, and the price it is charged', async () => {
    const { id, key } = await gw.createKey({ creditMicros: 5_000_000 });
    const m = (await (await fetch(`${gw.url}/v1/models/${model}`, { headers: auth(key) })).json()) as any;
    expect(m.capabilities).toMatchObject({ operations: ['generate'], sizes: ['1024x1024', '896x1280', '1280x896', '768x1408', '1408x768', '1K', '2K'], aspect_ratios: ['1:1', '3:4', '4:3', '9:16', '16:9'], max_n: 4 });
    expect(m.pricing).toEqual({ currency: 'USD', per_image: 0.04, factors: [{ when: { size: '2K' }, multiply: 1.5, label: '2K' }] });
    const post = (body: unknown) => fetch(`${gw.url}/v1/images/generations`, { method: 'POST', headers: { ...auth(key), 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const badSize = await post({ model, prompt: 'a kite', size: '512x512' });
    expect(badSize.status).toBe(400);
    const sizeError = ((await badSize.json()) as any).error.message as string;
    for (const size of m.capabilities.sizes) expect(sizeError).toContain(size);
    const badN = await post({ model, prompt: 'a kite', n: m.capabilities.max_n + 1 });
    expect(badN.status).toBe(400);
    expect(((await badN.json()) as any).error.message).toContain(`from 1 to ${m.capabilities.max_n}`);
    const ok = await post({ model, prompt: 'a kite', n: 2, size: '2K' });
    expect(ok.status, await ok.clone().text()).toBe(200);
    const rows = (await usageRowsOf(gw.services, id)).filter((r) => Number(r.status) === 200);
    // 2 × $0.04 × 1.5
    expect(Number(rows[0].cost_micros)).toBe(120_000);
    expect(rows[0].billed_by).toBe('2 images × $0.04 × 1.5 (2K)');
  });
});

describe('price rules are checked at load', () => {
  const base = (price: unknown, kind = 'video') => ({
    channels: [{ name: 's', type: 'simulator', base_url: 'http://127.0.0.1:1', models: ['m'] }],
    models: { m: { kind, ...(kind === 'video' ? { modes: ['text'] } : {}), price } },
  });
  const error = (price: unknown, kind?: string) => {
    try {
      validateConfig(base(price, kind));
      return '';
    } catch (err) {
      return (err as Error).message;
    }
  };

  it('names the model, the field and the allowed values', () => {
    expect(error({ per_second: 0.1, factors: [{ when: { quality: 'hd' }, multiply: 2 }] })).toBe('config: models.m.price.factors[0].when.quality: a video model\'s factors may name resolution, duration, audio, mode, input_video');
    expect(error({ per_second: 0.1, factors: [{ when: { input_video: 'yes' }, multiply: 2 }] })).toBe('config: models.m.price.factors[0].when.input_video: must be a boolean (got "yes")');
    expect(error({ per_second: 0.1, factors: [{ when: { mode: 'fast' }, multiply: 2 }] })).toBe('config: models.m.price.factors[0].when.mode: must be one of text, first_frame, first_last_frame, reference_image (got "fast")');
    expect(error({ per_second: 0.1, factors: [{ when: { audio: 'yes' }, multiply: 2 }] })).toBe('config: models.m.price.factors[0].when.audio: must be a boolean (got "yes")');
    expect(error({ per_image: 0.1, factors: [{ when: { n: 0 }, multiply: 2 }] }, 'image')).toBe('config: models.m.price.factors[0].when.n: must be above 0 (got 0)');
    expect(error({ input_per_million: 1, factors: [{ when: { n: 2 }, multiply: 2 }] }, 'chat')).toBe("config: models.m.price.factors[0].when.n: a chat model's price takes no factors");
    expect(error({ per_second: 0.1, factors: [{ when: { audio: true }, multiply: 0 }] })).toMatch(/^config: models\.m\.price\.factors\[0\]\.multiply: /);
    expect(error({ per_second: 0.1, factors: [{ when: { audio: true }, multiply: 1.5, code: 'x' }] })).toBe('config: models.m.price.factors[0].code: unknown field');
    expect(error({ per_second: { '720p': 0.1 }, factors: [{ when: { audio: true, resolution: ['720p', '1080p'] }, multiply: 1.5 }] })).toBe('');
    expect(error({ per_second: 0.1, factors: [{ when: { input_video: true }, multiply: 1.5 }] })).toBe('');
    expect(error({ per_image: 0.1, factors: [{ when: { input_video: true }, multiply: 2 }] }, 'image')).toBe("config: models.m.price.factors[0].when.input_video: an image model's factors may name size, quality, n");
  });

  it('prices an input video by its factor, and a request without one without it', () => {
    // No provider the gateway offers takes an input video yet: the evaluator is what applies the factor.
    const model: ModelConfig = { kind: 'video', modes: ['text'], price: { per_second: { '720p': 0.1 }, factors: [{ when: { input_video: true }, multiply: 1.5, label: 'video input' }, { when: { input_video: false, mode: 'text' }, multiply: 0.8 }] } };
    // 8 s × $0.1 × 1.5 = $1.20
    expect(videoQuote(model, { unit: 'seconds', units: 8, resolution: '720p' }, { input_video: true })).toEqual({ micros: 1_200_000, billedBy: '8 s × $0.1/s (720p) × 1.5 (video input)' });
    // Absent counts as false: 8 s × $0.1 × 0.8 = $0.64
    expect(videoQuote(model, { unit: 'seconds', units: 8, resolution: '720p' }, { mode: 'text' })).toEqual({ micros: 640_000, billedBy: '8 s × $0.1/s (720p) × 0.8 (no input_video, mode text)' });
  });
});
