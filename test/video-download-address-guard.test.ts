import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VEO_DEFAULT_MODELS } from '../src/providers/gemini/models.js';
import { HAILUO_DEFAULT_MODELS } from '../src/providers/minimax/models.js';
import { sampleVideo } from '../src/simulator/mp4.js';
import { startGateway, type TestGateway } from './helpers/gateway.js';
import { errorShapeProblem } from './helpers/error-shapes.js';
import { createTask, isFinished, waitForTask } from './helpers/video.js';

// Results only the channel's key can fetch (Veo's file URI and its redirect, MiniMax's
// download_url) are fetched by the gateway itself, so a hostile provider could point them at the
// gateway's own network. Those fetches get the private-network verdict of result URLs: a hop to a
// private, loopback or link-local address is refused unless the task's channel allows its private
// network — except hops to the channel's own base_url origin, the operator's choice (here a
// loopback one, like the simulator in tests).

const VEO_KEY = 'veo-hostile-key-0123456789';
const MINIMAX_KEY = 'minimax-hostile-key-0123456789';
const VEO_MODEL = 'veo-3.1-fast-generate-preview';
const HAILUO_MODEL = 'MiniMax-Hailuo-02';

async function listen(server: Server): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('key-only video downloads through the address guard', () => {
  // A server on the gateway's private network (loopback here): what a hostile provider aims at.
  const internalHits: string[] = [];
  let internal: Server;
  let internalUrl = '';
  // A provider speaking Veo's and MiniMax's wire, whose result points wherever the prompt says.
  let provider: Server;
  let providerUrl = '';
  let gw: TestGateway;

  beforeAll(async () => {
    internal = createServer((req, res) => {
      internalHits.push(`${req.method} ${req.url} key=${String(req.headers['x-goog-api-key'] ?? '')}`);
      res.writeHead(200, { 'content-type': 'video/mp4' }).end('internal-secret-bytes');
    });
    internalUrl = await listen(internal);
    const prompts: string[] = [];
    const target = (prompt: string): string =>
      ({ own: `${providerUrl}/v1beta/files/own:download?alt=media`, redirect: `${providerUrl}/v1beta/files/redirect:download?alt=media`, internal: `${internalUrl}/v.mp4`, metadata: 'http://169.254.169.254/latest/meta-data/' })[prompt] ?? '';
    provider = createServer((req, res) => {
      let raw = '';
      req.on('data', (c: Buffer) => (raw += String(c)));
      req.on('end', () => {
        const url = new URL(req.url ?? '/', providerUrl);
        const json = (body: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
        // Veo on the Gemini API.
        const create = /^\/v1beta\/models\/([^/:]+):predictLongRunning$/.exec(url.pathname);
        if (req.method === 'POST' && create) {
          prompts.push(JSON.parse(raw).instances[0].prompt);
          return json({ name: `models/${create[1]}/operations/op${prompts.length - 1}` });
        }
        const op = /^\/v1beta\/models\/([^/]+)\/operations\/op(\d+)$/.exec(url.pathname);
        if (op) return json({ name: `models/${op[1]}/operations/op${op[2]}`, done: true, response: { generateVideoResponse: { generatedSamples: [{ video: { uri: target(prompts[Number(op[2])]) } }] } } });
        if (url.pathname === '/v1beta/files/own:download') return res.writeHead(200, { 'content-type': 'video/mp4' }).end(sampleVideo());
        if (url.pathname === '/v1beta/files/redirect:download') return res.writeHead(302, { location: `${internalUrl}/redirected.mp4` }).end();
        // MiniMax: the file id is the prompt's index; its download_url the prompt's target.
        if (req.method === 'POST' && url.pathname === '/v1/video_generation') {
          prompts.push(JSON.parse(raw).prompt);
          return json({ task_id: `t${prompts.length - 1}`, base_resp: { status_code: 0, status_msg: 'success' } });
        }
        if (url.pathname === '/v1/query/video_generation') {
          const n = String(url.searchParams.get('task_id')).slice(1);
          return json({ task_id: `t${n}`, status: 'Success', file_id: `${1000 + Number(n)}`, base_resp: { status_code: 0, status_msg: 'success' } });
        }
        if (url.pathname === '/v1/files/retrieve') {
          const prompt = prompts[Number(url.searchParams.get('file_id')) - 1000];
          const downloadUrl = prompt === 'own' ? `${providerUrl}/minimax-files/own.mp4` : target(prompt);
          return json({ file: { file_id: url.searchParams.get('file_id'), download_url: downloadUrl }, base_resp: { status_code: 0, status_msg: 'success' } });
        }
        if (url.pathname === '/minimax-files/own.mp4') return res.writeHead(200, { 'content-type': 'video/mp4' }).end(sampleVideo());
        res.writeHead(404).end();
      });
    });
    providerUrl = await listen(provider);
    gw = await startGateway({
      simulator: { embedded: false },
      channels: [
        // On a loopback base_url, without allow_private_network.
        { name: 'veo', type: 'gemini', base_url: providerUrl, api_key: VEO_KEY, models: [VEO_MODEL] },
        { name: 'hailuo', type: 'minimax', base_url: providerUrl, api_key: MINIMAX_KEY, models: [HAILUO_MODEL] },
        // The same provider on a channel that allows its private network.
        { name: 'veo-private', type: 'gemini', base_url: providerUrl, api_key: VEO_KEY, models: ['veo-private'], allow_private_network: true, model_map: { 'veo-private': VEO_MODEL } },
      ],
      models: { [VEO_MODEL]: VEO_DEFAULT_MODELS[VEO_MODEL], [HAILUO_MODEL]: HAILUO_DEFAULT_MODELS[HAILUO_MODEL], 'veo-private': VEO_DEFAULT_MODELS[VEO_MODEL] },
    });
  });
  afterAll(async () => {
    await gw?.close();
    await new Promise((r) => provider?.close(r));
    await new Promise((r) => internal?.close(r));
  });

  const finished = async (key: string, model: string, prompt: string) => {
    const body = model === HAILUO_MODEL ? { model, prompt, duration: 6, resolution: '768p' } : { model, prompt, duration: 4, resolution: '720p' };
    const created = await createTask(gw.url, key, body);
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const done = await waitForTask(gw.url, key, created.body.data.task_id, isFinished);
    expect(done.status, done.fail_reason).toBe('SUCCESS');
    return done.task_id as string;
  };
  const content = async (key: string, taskId: string) => {
    const res = await fetch(`${gw.url}/v1/video/generations/${taskId}/content`, { headers: { authorization: `Bearer ${key}` } });
    return { status: res.status, text: Buffer.from(await res.arrayBuffer()).toString('latin1') };
  };

  it.each([VEO_MODEL, HAILUO_MODEL])('%s: a download from the channel\'s own (loopback) origin still streams', async (model) => {
    const { key } = await gw.createKey();
    const got = await content(key, await finished(key, model, 'own'));
    expect(got.status).toBe(200);
    expect(Buffer.from(got.text, 'latin1').equals(sampleVideo())).toBe(true);
  });

  it.each([
    [VEO_MODEL, 'redirect'],
    [VEO_MODEL, 'internal'],
    [VEO_MODEL, 'metadata'],
    [HAILUO_MODEL, 'internal'],
    [HAILUO_MODEL, 'metadata'],
  ])('%s: a result pointing at a private address (%s) is refused with 502, nothing fetched or leaked', async (model, prompt) => {
    const { key } = await gw.createKey();
    const taskId = await finished(key, model, prompt);
    internalHits.length = 0;
    const got = await content(key, taskId);
    expect(got.status).toBe(502);
    const body = JSON.parse(got.text);
    expect(errorShapeProblem('video', body)).toBeNull();
    expect(body.message).toMatch(/not a public address/);
    expect(internalHits).toEqual([]);
    expect(got.text).not.toContain('internal-secret-bytes');
    expect(got.text).not.toContain(VEO_KEY);
    expect(got.text).not.toContain(MINIMAX_KEY);
  });

  it('a channel with allow_private_network follows the same redirect (the key stays on its origin)', async () => {
    const { key } = await gw.createKey();
    const taskId = await finished(key, 'veo-private', 'redirect');
    internalHits.length = 0;
    const got = await content(key, taskId);
    expect(got.status).toBe(200);
    expect(got.text).toBe('internal-secret-bytes');
    expect(internalHits).toEqual(['GET /redirected.mp4 key=']);
  });
});
