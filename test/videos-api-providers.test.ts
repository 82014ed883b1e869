import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI, { toFile } from 'openai';
import type { ModelConfig } from '../src/config/schema.js';
import { WAN_DEFAULT_MODELS } from '../src/providers/dashscope/models.js';
import { VEO_DEFAULT_MODELS } from '../src/providers/gemini/models.js';
import { KLING_DEFAULT_MODELS } from '../src/providers/kling/models.js';
import { KLING_SIMULATOR_ACCOUNT } from '../src/providers/kling/wire.js';
import { HAILUO_DEFAULT_MODELS } from '../src/providers/minimax/models.js';
import { encodePng } from '../src/simulator/png.js';
import { embeddedDefault } from '../src/config-file/defaults.js';
import { startGateway, type TestGateway } from './helpers/gateway.js';
import { providerRig, type ProviderRig } from './helpers/provider-video.js';
import { readTask, untilDone } from './helpers/video.js';

// The Videos API through the official openai SDK on each video provider's simulator part (a
// channel of that provider's type, so its adapter's real HTTP path runs): seconds and size become
// the provider's own duration, resolution and ratio; a text video from JSON and a first-frame video
// from an uploaded file run to completed, download as MP4, list, and delete; a length the model
// cannot do is a 400 listing the ones it can; another key's id is 404.

interface ProviderCase {
  type: string;
  models: Record<string, ModelConfig>;
  channel?: Record<string, unknown>;
  text: { model: string; seconds: string; size: string };
  file: { model: string; seconds: string; size: string };
  /** A length the text model cannot do, and the lengths the 400 lists. */
  badSeconds: string;
  allowed: string[];
  /** What the provider's task object shows for the text video's seconds and size (its own terms). */
  upstream: (data: any) => void;
}

const CASES: ProviderCase[] = [
  {
    type: 'gemini',
    models: VEO_DEFAULT_MODELS,
    text: { model: 'veo-3.1-fast-generate-preview', seconds: '4', size: '720x1280' },
    file: { model: 'veo-3.1-generate-preview', seconds: '8', size: '1920x1080' },
    badSeconds: '5',
    allowed: ['"4"', '"6"', '"8"'],
    upstream: (d) => expect(d.done).toBe(true),
  },
  {
    type: 'kling',
    models: KLING_DEFAULT_MODELS,
    channel: { api_key: KLING_SIMULATOR_ACCOUNT.apiKey, api_secret: KLING_SIMULATOR_ACCOUNT.apiSecret },
    text: { model: 'kling-v2-6', seconds: '10', size: '1080x1080' },
    // From an image the size picks the mode (1080p = pro) only: Kling takes no ratio with an image.
    file: { model: 'kling-v2-6', seconds: '5', size: '1920x1080' },
    badSeconds: '8',
    allowed: ['"5"', '"10"'],
    upstream: (d) => expect(d.task_result.videos[0].duration).toMatch(/^10\./),
  },
  {
    type: 'dashscope',
    models: WAN_DEFAULT_MODELS,
    text: { model: 'wan2.5-t2v-preview', seconds: '5', size: '832x480' },
    file: { model: 'wan2.5-i2v-preview', seconds: '10', size: '1280x720' },
    badSeconds: '7',
    allowed: ['"5"', '"10"'],
    upstream: (d) => expect(d.output.task_status).toBe('SUCCEEDED'),
  },
  {
    type: 'minimax',
    models: HAILUO_DEFAULT_MODELS,
    text: { model: 'MiniMax-Hailuo-02', seconds: '6', size: '1366x768' },
    file: { model: 'MiniMax-Hailuo-02', seconds: '10', size: '1366x768' },
    badSeconds: '8',
    allowed: ['"6"', '"10"'],
    upstream: (d) => expect(d.status).toBe('Success'),
  },
];

const frame = () => encodePng(16, 16, new Uint8Array(16 * 16 * 3).fill(120));


describe.each(CASES)('the Videos API on the $type simulator part', (c) => {
  let rig: ProviderRig;
  let key: string;
  let client: OpenAI;
  const sdk = (k: string) => new OpenAI({ apiKey: k, baseURL: `${rig.gw.url}/v1`, maxRetries: 0 });

  beforeAll(async () => {
    rig = await providerRig(c.type, c.models, c.channel ?? {});
    key = (await rig.gw.createKey({ creditMicros: 100_000_000 })).key;
    client = sdk(key);
  });
  afterAll(async () => rig.close());

  it('creates from JSON and from a form with an uploaded first frame; both complete, download as MP4, list and delete', async () => {
    const res = await fetch(`${rig.gw.url}/v1/videos`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: c.text.model, prompt: 'a corgi surfing', seconds: c.text.seconds, size: c.text.size }),
    });
    const text = (await res.json()) as any;
    expect(res.status, JSON.stringify(text)).toBe(200);
    expect(text).toMatchObject({ object: 'video', model: c.text.model, status: 'queued', seconds: c.text.seconds, size: c.text.size });

    const file = await client.videos.create({
      model: c.file.model,
      prompt: 'the frame comes alive',
      seconds: c.file.seconds as any,
      size: c.file.size as any,
      input_reference: await toFile(frame(), 'frame.png', { type: 'image/png' }),
    });
    expect(file).toMatchObject({ seconds: c.file.seconds, size: c.file.size });

    for (const v of [text, file]) {
      const done = await untilDone(client, v.id);
      expect(done.status, JSON.stringify(done.error)).toBe('completed');
      expect(done.progress).toBe(100);
      const mp4 = Buffer.from(await (await client.videos.downloadContent(v.id)).arrayBuffer());
      expect(mp4.subarray(4, 8).toString('latin1')).toBe('ftyp');
    }
    // One task underneath: the native API reads the same id, with the provider's own task object.
    const native = await readTask(rig.gw.url, key, text.id);
    expect(native.body.data).toMatchObject({ task_id: text.id, status: 'SUCCESS', action: 'textGenerate' });
    c.upstream(native.body.data.data);
    expect((await readTask(rig.gw.url, key, file.id)).body.data.action).toBe('generate');

    const page = await client.videos.list({ limit: 1 });
    expect(page.data).toHaveLength(1);
    expect(page.has_more).toBe(true);
    expect((await page.getNextPage()).data).toHaveLength(1);

    expect(await client.videos.delete(file.id)).toEqual({ id: file.id, object: 'video.deleted', deleted: true });
    await expect(client.videos.retrieve(file.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    expect((await client.videos.list({ limit: 10 })).data.map((v) => v.id)).toEqual([text.id]);
  });

  it('refuses a length the model cannot do with a 400 listing what it can, and another key’s id with a 404', async () => {
    const bad = await client.videos.create({ model: c.text.model, prompt: 'x', seconds: c.badSeconds as any }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(OpenAI.BadRequestError);
    expect((bad as any).error.param).toBe('seconds');
    for (const s of c.allowed) expect((bad as any).message).toContain(s);

    const size = await client.videos.create({ model: c.text.model, prompt: 'x', size: '100x100' as any }).catch((e: unknown) => e);
    expect(size).toBeInstanceOf(OpenAI.BadRequestError);
    expect((size as any).error.param).toBe('size');
    expect((size as any).message).toContain(`"${c.text.size}"`);

    const mine = await client.videos.create({ model: c.text.model, prompt: 'mine' });
    const other = sdk((await rig.gw.createKey()).key);
    await expect(other.videos.retrieve(mine.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(other.videos.delete(mine.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(other.videos.downloadContent(mine.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await untilDone(client, mine.id);
  });
});

describe('the Videos API on the embedded default (the simulator channel plays every family)', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    const d = embeddedDefault({});
    gw = await startGateway({ channels: d.channels, models: d.models });
  });
  afterAll(async () => gw.close());

  it('runs a video of each family from an uploaded first frame or text to completed and downloads it', async () => {
    const client = new OpenAI({ apiKey: (await gw.createKey()).key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const requests: OpenAI.Videos.VideoCreateParams[] = [
      { model: 'doubao-seedance-1-0-pro-250528', prompt: 'a corgi', seconds: '5' as any, size: '1248x704' as any },
      { model: 'veo-3.1-fast-generate-preview', prompt: 'a corgi', seconds: '4', size: '1280x720' },
      { model: 'kling-v2-6', prompt: 'a corgi', seconds: '5' as any, input_reference: await toFile(frame(), 'f.png', { type: 'image/png' }) },
      { model: 'wan2.5-t2v-preview', prompt: 'a corgi', size: '1920x1080' as any },
      { model: 'MiniMax-Hailuo-02', prompt: 'a corgi', seconds: '6' as any },
    ];
    const created = await Promise.all(requests.map((r) => client.videos.create(r)));
    for (const [i, v] of created.entries()) {
      const done = await untilDone(client, v.id);
      expect(done.status, `${requests[i].model}: ${JSON.stringify(done.error)}`).toBe('completed');
      const mp4 = Buffer.from(await (await client.videos.downloadContent(v.id)).arrayBuffer());
      expect(mp4.subarray(4, 8).toString('latin1')).toBe('ftyp');
    }
    // Sizes the client left out are the provider's default the hold assumed.
    expect(created[2].size).toBe('1280x720');
    expect(created[4].size).toBe('1366x768');
  });
});
