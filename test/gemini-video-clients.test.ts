import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { GoogleGenAI, type GenerateVideosOperation } from '@google/genai';
import { experimental_generateVideo } from 'ai';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { embeddedDefault } from '../src/config-file/defaults.js';
import { startGateway, tempDir, usageRowsOf, type TestGateway } from './helpers/gateway.js';
import { photo } from './helpers/png.js';
import { readTask } from './helpers/video.js';

// Google's video generation on every video model: @google/genai's generateVideos /
// getVideosOperation / files.download and the AI SDK's experimental_generateVideo with the Google
// provider, on Veo and on models of other providers (Seedance, Kling), with inline images. The
// operation is the same task as /v1/video/generations (one id, one hold, one ledger row).

const VEO = 'veo-3.1-fast-generate-preview';
const SEEDANCE = 'doubao-seedance-1-0-pro-250528';
const KLING = 'kling-v2-6';
const PICTURE = photo(64, 64);

const isMp4 = (bytes: Uint8Array) => Buffer.from(bytes).subarray(4, 8).toString('latin1') === 'ftyp';
const taskIdOf = (name: string) => name.slice(name.lastIndexOf('/') + 1);

async function gateway(overrides: Record<string, unknown> = {}): Promise<TestGateway> {
  const d = embeddedDefault({});
  return startGateway({ channels: d.channels, models: d.models, ...overrides });
}

async function until(ai: GoogleGenAI, operation: GenerateVideosOperation): Promise<GenerateVideosOperation> {
  for (const started = Date.now(); Date.now() - started < 15_000; ) {
    if (operation.done) return operation;
    await new Promise((r) => setTimeout(r, 50));
    operation = await ai.operations.getVideosOperation({ operation });
  }
  throw new Error(`operation ${operation.name} did not finish`);
}

async function predict(gw: TestGateway, key: string, model: string, body: unknown) {
  const res = await fetch(`${gw.url}/v1beta/models/${model}:predictLongRunning`, { method: 'POST', headers: { 'x-goog-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as any };
}

describe('@google/genai against a gateway behind https (server.public_url)', () => {
  let gw: TestGateway;
  let key: string;
  let keyId: string;
  let ai: GoogleGenAI;
  const dir = tempDir('mediagate-genai-video-');
  beforeAll(async () => {
    gw = await gateway({ server: { host: '127.0.0.1', port: 0, public_url: 'https://gateway.example' } });
    ({ key, id: keyId } = await gw.createKey());
    ai = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: gw.url } });
  });
  afterAll(async () => {
    await gw.close();
    dir.remove();
  });

  it('Veo: generateVideos, getVideosOperation until done, files.download of the video; the same task everywhere', async () => {
    const started = await ai.models.generateVideos({ model: VEO, prompt: 'a corgi runs on grass', config: { durationSeconds: 4, aspectRatio: '16:9', negativePrompt: 'rain' } });
    expect(started.name).toMatch(new RegExp(`^models/${VEO}/operations/task_[0-9A-Za-z]{32}$`));
    const done = await until(ai, started);
    expect(done.error).toBeUndefined();
    const video = done.response!.generatedVideos![0];
    expect(video.video!.uri).toMatch(/^https:\/\/gateway\.example\/v1beta\/files\/[0-9a-f]+:download\?alt=media$/);
    const file = join(dir.path, 'veo.mp4');
    await ai.files.download({ file: video, downloadPath: file });
    expect(isMp4(readFileSync(file))).toBe(true);

    // One task: readable by the same id through the video task API, one ledger row, one hold.
    const id = taskIdOf(started.name!);
    const task = await readTask(gw.url, key, id);
    expect(task.body.data).toMatchObject({ task_id: id, status: 'SUCCESS', action: 'textGenerate' });
    expect(task.body.data.data.id).toBe(id);
    // The rows of any video task: its create, then its settle.
    const rows = (await usageRowsOf(gw.services, keyId)).filter((r) => r.model === VEO);
    expect(rows.map((r) => [r.endpoint, r.status])).toEqual([['video', 200], ['video.settle', 200]]);
    const holds = await gw.services.store.db.selectFrom('tasks').select(['reservation_id']).where('task_id', '=', id).execute();
    expect(holds).toHaveLength(1);
  });

  it('Seedance (a non-Google model) from an inline image: first-frame task, video downloads', async () => {
    const started = await ai.models.generateVideos({ model: SEEDANCE, prompt: 'the corgi jumps', image: { imageBytes: PICTURE.toString('base64'), mimeType: 'image/png' }, config: { durationSeconds: 5, aspectRatio: '16:9', resolution: '720p' } });
    const done = await until(ai, started);
    expect(done.error).toBeUndefined();
    const id = taskIdOf(started.name!);
    expect(id).toMatch(/^cgt-/);
    expect((await readTask(gw.url, key, id)).body.data.action).toBe('generate');
    const file = join(dir.path, 'seedance.mp4');
    await ai.files.download({ file: done.response!.generatedVideos![0], downloadPath: file });
    expect(isMp4(readFileSync(file))).toBe(true);
  });

  it('a failed task is a done operation with a google.rpc.Status error', async () => {
    const started = await ai.models.generateVideos({ model: SEEDANCE, prompt: 'a corgi [fail]' });
    const done = await until(ai, started);
    expect(done.response).toBeUndefined();
    expect(done.error).toMatchObject({ code: 2 });
    expect(String(done.error!.message)).toMatch(/^OutputVideoSensitiveContentDetected: /);
    const cancelled = await until(ai, await ai.models.generateVideos({ model: VEO, prompt: 'a corgi [cancel]', config: { durationSeconds: 4 } }));
    expect(cancelled.error).toMatchObject({ code: 1 });
  });
});

describe('Gemini-format video over plain http', () => {
  let gw: TestGateway;
  let key: string;
  beforeAll(async () => {
    gw = await gateway();
    key = (await gw.createKey()).key;
  });
  afterAll(async () => gw.close());

  // The SDK's own download refuses private addresses (this gateway is on loopback): the same
  // fetch, without that check, with the URL the SDK made (the key added as ?key=).
  const download = async ({ url }: { url: URL }) => {
    const res = await fetch(url);
    if (res.status !== 200) throw new Error(`download answered ${res.status}`);
    return { data: new Uint8Array(await res.arrayBuffer()), mediaType: res.headers.get('content-type') ?? undefined };
  };

  it.each([
    { model: VEO, prompt: 'a corgi runs', duration: 4, aspectRatio: '16:9' as const },
    { model: KLING, prompt: { image: PICTURE, text: 'the corgi jumps' }, duration: 5, aspectRatio: undefined },
  ])('the AI SDK’s experimental_generateVideo with the Google provider: $model', async ({ model, prompt, duration, aspectRatio }) => {
    const google = createGoogleGenerativeAI({ baseURL: `${gw.url}/v1beta`, apiKey: key });
    const result = await experimental_generateVideo({ model: google.video(model), prompt, duration, aspectRatio, download, providerOptions: { google: { pollIntervalMs: 50 } } });
    expect(isMp4(result.video.uint8Array)).toBe(true);
  });

  it('the video URI downloads with the key as x-goog-api-key, ?key= or Bearer, and not without it', async () => {
    const created = await predict(gw, key, KLING, { instances: [{ prompt: 'a corgi' }], parameters: { durationSeconds: 5 } });
    expect(created.status).toBe(200);
    let op: any = created.body;
    for (let i = 0; i < 300 && !op.done; i++) {
      await new Promise((r) => setTimeout(r, 50));
      op = await (await fetch(`${gw.url}/v1beta/${op.name}?key=${key}`)).json();
    }
    const uri: string = op.response.generateVideoResponse.generatedSamples[0].video.uri;
    expect(new URL(uri).origin).toBe(gw.url);
    for (const [url, headers] of [
      [uri, { 'x-goog-api-key': key }],
      [`${uri}&key=${key}`, {}],
      [uri, { authorization: `Bearer ${key}` }],
    ] as const) {
      const res = await fetch(url, { headers });
      expect(res.status).toBe(200);
      expect(isMp4(new Uint8Array(await res.arrayBuffer()))).toBe(true);
    }
    const anonymous = await fetch(uri);
    expect(anonymous.status).toBe(401);
    expect(((await anonymous.json()) as any).error.status).toBe('UNAUTHENTICATED');
    // Another key sees neither the operation nor the file.
    const other = (await gw.createKey()).key;
    expect((await fetch(`${gw.url}/v1beta/${op.name}`, { headers: { 'x-goog-api-key': other } })).status).toBe(404);
    expect((await fetch(uri, { headers: { 'x-goog-api-key': other } })).status).toBe(404);
    // The operation lives under its own model only.
    expect((await fetch(`${gw.url}/v1beta/models/${VEO}/operations/${taskIdOf(op.name)}`, { headers: { 'x-goog-api-key': key } })).status).toBe(404);
  });

  it('answers a body of the wrong shape with Google’s error naming the field', async () => {
    const cases: [string, unknown, RegExp][] = [
      [VEO, { contents: [{ parts: [{ text: 'hi' }] }] }, /instances/],
      [VEO, { instances: [] }, /instances/],
      [VEO, { instances: [{ prompt: 'a' }, { prompt: 'b' }] }, /instances/],
      [VEO, { instances: [{ prompt: 'a', video: { uri: 'x' } }] }, /instances\[0\]\.video/],
      [VEO, { instances: [{ prompt: 'a', image: { gcsUri: 'gs://b/i.png' } }] }, /instances\[0\]\.image\.gcsUri/],
      [VEO, { instances: [{ prompt: 'a', image: { bytesBase64Encoded: 'not base64!', mimeType: 'image/png' } }] }, /instances\[0\]\.image\.bytesBase64Encoded/],
      [VEO, { instances: [{ prompt: 'a', image: { bytesBase64Encoded: Buffer.from('plain text, no image').toString('base64') } }] }, /instances\[0\]\.image is not a PNG/],
      [VEO, { instances: [{ prompt: 'a', lastFrame: { bytesBase64Encoded: PICTURE.toString('base64') } }] }, /instances\[0\]\.lastFrame needs instances\[0\]\.image/],
      [VEO, { instances: [{ prompt: 'a' }], parameters: { durationSeconds: 'five' } }, /parameters\.durationSeconds must be a whole number/],
      [VEO, { instances: [{ prompt: 'a' }], parameters: { durationSeconds: 5 } }, /parameters\.durationSeconds must be one of 4, 6, 8/],
      [VEO, { instances: [{ prompt: 'a' }], parameters: { aspectRatio: '4:3' } }, /parameters\.aspectRatio must be one of/],
      [VEO, { instances: [{ prompt: 'a' }], parameters: { seed: 7 } }, /parameters\.seed is not supported by Veo/],
      [VEO, { instances: [{ prompt: 'a' }], parameters: { sampleCount: 2 } }, /parameters\.sampleCount must be 1/],
      [SEEDANCE, { instances: [{ prompt: 'a' }], parameters: { durationSeconds: 99 } }, /durationSeconds/],
      ['doubao-seedance-1-0-lite-t2v-250428', { instances: [{ prompt: 'a', image: { bytesBase64Encoded: PICTURE.toString('base64'), mimeType: 'image/png' } }] }, /instances\[0\].*first_frame/],
      [VEO, { instances: [{}] }, /instances\[0\]\.prompt is required/],
      ['sim-chat', { instances: [{ prompt: 'a' }] }, /does not generate video/],
    ];
    for (const [model, body, message] of cases) {
      const r = await predict(gw, key, model, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error, JSON.stringify(body)).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' });
      expect(r.body.error.message, JSON.stringify(body)).toMatch(message);
    }
    const unknown = await predict(gw, key, 'no-such-model', { instances: [{ prompt: 'a' }] });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.status).toBe('NOT_FOUND');
    // A refusal is a video request's ledger row, under the model of the path, whether the schema or the handler refused it.
    const fresh = await gw.createKey();
    expect((await predict(gw, fresh.key, VEO, { contents: [] })).status).toBe(400);
    expect((await predict(gw, fresh.key, VEO, { instances: [{ prompt: 'a' }], parameters: { seed: 1 } })).status).toBe(400);
    const rows = await usageRowsOf(gw.services, fresh.id);
    expect(rows.map((r) => [r.endpoint, r.status, r.model, Number(r.cost_micros)])).toEqual([
      ['video', 400, VEO, 0],
      ['video', 400, VEO, 0],
    ]);
    // The chat methods still answer chat bodies on the same path.
    const chat = await fetch(`${gw.url}/v1beta/models/sim-chat:generateContent`, { method: 'POST', headers: { 'x-goog-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ contents: [{ parts: [{ text: 'hi' }] }] }) });
    expect(chat.status).toBe(200);
  });

  it('lists video models for Gemini clients with predictLongRunning', async () => {
    const list = (await (await fetch(`${gw.url}/v1beta/models`, { headers: { 'x-goog-api-key': key } })).json()) as any;
    expect(list.models.find((m: any) => m.name === `models/${VEO}`).supportedGenerationMethods).toEqual(['predictLongRunning']);
    expect(list.models.find((m: any) => m.name === 'models/sim-chat').supportedGenerationMethods).toContain('generateContent');
  });
});
