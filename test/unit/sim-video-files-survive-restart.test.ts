import { describe, expect, it } from 'vitest';
import { createHmac, randomBytes } from 'node:crypto';
import { startSimulator } from '../../src/simulator/server.js';
import { sampleVideo } from '../../src/simulator/mp4.js';
import { KLING_SIMULATOR_ACCOUNT } from '../../src/providers/kling/wire.js';
import { Agent, fetch as undiciFetch } from 'undici';
import { eventually } from '../helpers/video.js';

// The embedded simulator restarts on its old port with its old signing secret; videos handed out
// before the restart (Kling CDN links, DashScope signed URLs, Veo and MiniMax files fetched with
// the key) must still download although the new process forgot the tasks.

function klingJwt(): string {
  const enc = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  const head = `${enc({ alg: 'HS256', typ: 'JWT' })}.${enc({ iss: KLING_SIMULATOR_ACCOUNT.apiKey, exp: now + 600, nbf: now - 5 })}`;
  return `${head}.${createHmac('sha256', KLING_SIMULATOR_ACCOUNT.apiSecret).update(head).digest('base64url')}`;
}

async function json(url: string, init: RequestInit = {}): Promise<any> {
  return (await fetch(url, init)).json();
}

describe('simulator video files after a restart with the same signing secret', () => {
  it('serves every part’s finished video from the new process', async () => {
    const signingSecret = randomBytes(32);
    const first = await startSimulator({ videoSeconds: 0.2, signingSecret });
    const base = first.url;
    const post = (path: string, body: unknown, headers: Record<string, string>) => json(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

    const veo = await post('/v1beta/models/veo-3.1-generate-preview:predictLongRunning', { instances: [{ prompt: 'v' }] }, { 'x-goog-api-key': 'k' });
    const kling = await post('/v1/videos/text2video', { prompt: 'k' }, { authorization: `Bearer ${klingJwt()}` });
    const wan = await post('/api/v1/services/aigc/video-generation/video-synthesis', { model: 'wan2.5-t2v-preview', input: { prompt: 'w' } }, { authorization: 'Bearer sk', 'x-dashscope-async': 'enable' });
    const mm = await post('/v1/video_generation', { model: 'T2V-01', prompt: 'm' }, { authorization: 'Bearer mm' });

    const veoUri = await eventually(async () => (await json(`${base}/v1beta/${veo.name}`, { headers: { 'x-goog-api-key': 'k' } })).response?.generateVideoResponse?.generatedSamples?.[0]?.video?.uri as string);
    const klingUrl = await eventually(async () => (await json(`${base}/v1/videos/text2video/${kling.data.task_id}`, { headers: { authorization: `Bearer ${klingJwt()}` } })).data?.task_result?.videos?.[0]?.url as string);
    const wanUrl = await eventually(async () => (await json(`${base}/api/v1/tasks/${wan.output.task_id}`, { headers: { authorization: 'Bearer sk' } })).output?.video_url as string);
    const fileId = await eventually(async () => (await json(`${base}/v1/query/video_generation?task_id=${mm.task_id}`, { headers: { authorization: 'Bearer mm' } })).file_id as string);
    await first.close();

    const second = await startSimulator({ videoSeconds: 0.2, signingSecret, port: first.port });
    // A fresh connection pool: the old process's keep-alive sockets died with it.
    const dispatcher = new Agent();
    const fresh = (url: string, init: { headers?: Record<string, string> } = {}) => undiciFetch(url, { ...init, dispatcher });
    const freshJson = async (url: string, init: { headers?: Record<string, string> } = {}) => (await fresh(url, init)).json() as Promise<any>;
    try {
      const bytes = async (url: string, headers: Record<string, string> = {}) => {
        const res = await fresh(url, { headers });
        expect(res.status, url).toBe(200);
        return Buffer.from(await res.arrayBuffer());
      };
      expect((await bytes(veoUri, { 'x-goog-api-key': 'k' })).equals(sampleVideo())).toBe(true);
      expect((await bytes(klingUrl)).equals(sampleVideo())).toBe(true);
      expect((await bytes(wanUrl)).equals(sampleVideo())).toBe(true);
      const retrieved = await freshJson(`${base}/v1/files/retrieve?file_id=${fileId}`, { headers: { authorization: 'Bearer mm' } });
      expect(retrieved.base_resp.status_code).toBe(0);
      expect((await bytes(retrieved.file.download_url)).equals(sampleVideo())).toBe(true);
      // Ids the simulator never made are still refused.
      expect((await freshJson(`${base}/v1/files/retrieve?file_id=1234567890`, { headers: { authorization: 'Bearer mm' } })).base_resp.status_code).toBe(2013);
      expect((await fresh(klingUrl.replace(/[0-9a-f]{32}\.mp4$/, `${'0'.repeat(32)}.mp4`))).status).toBe(404);
    } finally {
      await dispatcher.close();
      await second.close();
    }
  });
});
