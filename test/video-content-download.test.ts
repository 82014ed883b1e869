import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ModelConfig } from '../src/config/schema.js';
import { VEO_DEFAULT_MODELS } from '../src/providers/gemini/models.js';
import { HAILUO_DEFAULT_MODELS } from '../src/providers/minimax/models.js';
import { sampleVideo } from '../src/simulator/mp4.js';
import { newWebhookSecret } from '../src/tasks/webhooks/signing.js';
import { tempDir, type TestGateway } from './helpers/gateway.js';
import { createAndFinish, providerRig, type ProviderRig } from './helpers/provider-video.js';
import { eventually } from './helpers/video.js';
import { startReceiver } from './helpers/webhook-receiver.js';

// Results only the channel's key can fetch (Veo's generated file, Hailuo's file_id): the gateway
// serves them at /v1/video/generations/{id}/content through the adapter's download, with Range,
// shows that URL as fail_reason wherever the record is presented (read, list, webhooks), and the
// archive copies them like any other video.

const video = sampleVideo();
const PUBLIC = 'https://videos.example.com/gw';

const providers: { type: string; model: string; models: Record<string, ModelConfig>; body: Record<string, unknown>; secret: string }[] = [
  { type: 'gemini', model: 'veo-3.1-fast-generate-preview', models: VEO_DEFAULT_MODELS, body: { duration: 4, resolution: '720p' }, secret: 'gemini-secret-key-789' },
  { type: 'minimax', model: 'MiniMax-Hailuo-02', models: HAILUO_DEFAULT_MODELS, body: { duration: 6, resolution: '768p' }, secret: 'minimax-secret-key-789' },
];

async function content(gw: TestGateway, key: string, taskId: string, range?: string) {
  const res = await fetch(`${gw.url}/v1/video/generations/${taskId}/content`, { headers: { authorization: `Bearer ${key}`, ...(range ? { range } : {}) } });
  return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
}

const contentUrl = (base: string, taskId: string) => `${base}/v1/video/generations/${taskId}/content`;

describe.each(providers)('video content through the gateway: $type', (p) => {
  describe('from the provider, with the channel key', () => {
    let rig: ProviderRig;
    beforeAll(async () => {
      rig = await providerRig(p.type, p.models, { api_key: p.secret });
    });
    afterAll(async () => rig.close());

    it('shows the /content URL as fail_reason and streams the MP4 there, Range included, to the owner only', async () => {
      const owner = await rig.gw.createKey();
      const done = await createAndFinish(rig.gw, owner.key, { model: p.model, prompt: 'a corgi', ...p.body });
      expect(done.status).toBe('SUCCESS');
      // No server.public_url: the URL is built from the Host the client called.
      expect(done.fail_reason).toBe(contentUrl(rig.gw.url, done.task_id));

      const whole = await content(rig.gw, owner.key, done.task_id);
      expect(whole.status).toBe(200);
      expect(whole.headers.get('content-type')).toBe('video/mp4');
      expect(whole.headers.get('accept-ranges')).toBe('bytes');
      expect(whole.headers.get('content-length')).toBe(String(video.length));
      expect(whole.body.subarray(4, 8).toString('latin1')).toBe('ftyp');
      expect(whole.body.equals(video)).toBe(true);

      const part = await content(rig.gw, owner.key, done.task_id, 'bytes=100-199');
      expect(part.status).toBe(206);
      expect(part.headers.get('content-range')).toBe(`bytes 100-199/${video.length}`);
      expect(part.body.equals(video.subarray(100, 200))).toBe(true);

      const other = await rig.gw.createKey();
      const refused = await content(rig.gw, other.key, done.task_id);
      expect(refused.status).toBe(404);
      expect(JSON.parse(refused.body.toString()).code).toBe('task_not_exist');

      // The key never reaches the client, in the record or the video's answer.
      expect(JSON.stringify(done)).not.toContain(p.secret);
      expect([...whole.headers.values()].join(' ')).not.toContain(p.secret);
    });

    it('shows the same URL in the task list', async () => {
      const owner = await rig.gw.createKey();
      const done = await createAndFinish(rig.gw, owner.key, { model: p.model, prompt: 'a corgi', ...p.body });
      expect(done.status).toBe('SUCCESS');
      const listed = (await (await fetch(`${rig.gw.url}/v1/video/generations`, { headers: { authorization: `Bearer ${owner.key}` } })).json()) as any;
      expect(listed.data.tasks.find((t: any) => t.task_id === done.task_id).fail_reason).toBe(contentUrl(rig.gw.url, done.task_id));
    });
  });

  describe('with server.public_url, webhooks and an archive', () => {
    let rig: ProviderRig;
    let dir: ReturnType<typeof tempDir>;
    beforeAll(async () => {
      dir = tempDir('mediagate-videos-');
      rig = await providerRig(p.type, p.models, { api_key: p.secret }, {
        server: { host: '127.0.0.1', port: 0, public_url: PUBLIC },
        storage: { type: 'local', dir: dir.path, retry_delays_s: [0.05, 0.05], tick_ms: 20 },
        webhooks: { allow_insecure: true, tick_ms: 20 },
      });
    });
    afterAll(async () => {
      await rig.close();
      dir.remove();
    });

    it('builds the URL from public_url (reads and the webhook payload) and copies the video into storage, then serves the copy', async () => {
      const owner = await rig.gw.createKey();
      await rig.gw.services.lifecycle.secrets.rotate(owner.id, newWebhookSecret(), Date.now(), 0);
      const rx = await startReceiver();
      let done: any;
      try {
        done = await createAndFinish(rig.gw, owner.key, { model: p.model, prompt: 'a corgi', callback_url: rx.url, ...p.body });
        expect(done.status).toBe('SUCCESS');
        expect(done.fail_reason).toBe(contentUrl(PUBLIC, done.task_id));
        // public_url is not reachable from the provider: Hailuo's callback check fails, the task is
        // created without the callback and polled like any other (no token kept).
        expect((await rig.gw.services.tasks.repo.get(done.task_id))?.callback_token ?? null).toBeNull();
        // A webhook answers no request: its URL comes from public_url too.
        await eventually(() => rx.received.length >= 1, 10_000, 'the webhook');
        const payload = JSON.parse(rx.received[0].body);
        expect(payload.data.status).toBe('SUCCESS');
        expect(payload.data.fail_reason).toBe(contentUrl(PUBLIC, done.task_id));
      } finally {
        await rx.close();
      }

      const copy = await eventually(async () => {
        const row = await rig.gw.services.lifecycle.archives.get(done.task_id);
        return row?.state === 'stored' && row;
      }, 10_000, 'the archive copy');
      expect(copy.bytes).toBe(video.length);
      expect(readFileSync(join(dir.path, `${done.task_id}.mp4`)).equals(video)).toBe(true);
      const part = await content(rig.gw, owner.key, done.task_id, 'bytes=0-99');
      expect(part.status).toBe(206);
      expect(part.body.equals(video.subarray(0, 100))).toBe(true);
    });
  });
});
