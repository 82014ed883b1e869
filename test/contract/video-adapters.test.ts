import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ModelConfig, VideoModeName } from '../../src/config/schema.js';
import { SEEDANCE_MODELS } from '../../src/providers/ark/models.js';
import { WAN_DEFAULT_MODELS } from '../../src/providers/dashscope/models.js';
import { VEO_DEFAULT_MODELS } from '../../src/providers/gemini/models.js';
import { KLING_DEFAULT_MODELS } from '../../src/providers/kling/models.js';
import { KLING_SIMULATOR_ACCOUNT } from '../../src/providers/kling/wire.js';
import { HAILUO_DEFAULT_MODELS } from '../../src/providers/minimax/models.js';
import { VIDU_DEFAULT_MODELS } from '../../src/providers/vidu/models.js';
import { RUNWAY_DEFAULT_MODELS } from '../../src/providers/runway/models.js';
import { LUMA_DEFAULT_MODELS } from '../../src/providers/luma/models.js';
import { PIXVERSE_DEFAULT_MODELS } from '../../src/providers/pixverse/models.js';
import { BYTEPLUS_DEFAULT_MODELS } from '../../src/providers/byteplus/models.js';
import { JIMENG_DEFAULT_MODELS } from '../../src/providers/jimeng/models.js';
import { FAL_DEFAULT_MODELS } from '../../src/providers/fal/models.js';
import { REPLICATE_DEFAULT_MODELS } from '../../src/providers/replicate/models.js';
import { JIMENG_SIMULATOR_ACCOUNT } from '../../src/providers/jimeng/wire.js';
import { VERTEX_DEFAULT_MODELS } from '../../src/providers/vertex/models.js';
import { VERTEX_SIMULATOR_ACCOUNT } from '../../src/providers/vertex/wire.js';
import { providerFor } from '../../src/providers/index.js';
import { sampleVideo } from '../../src/simulator/mp4.js';
import { bindTask } from '../../src/tasks/binding.js';
import { patternImage } from '../../src/simulator/png.js';
import { usageRowsOf } from '../helpers/gateway.js';
import { balanceOf, createAndFinish, expectUrlServes, providerRig, type ProviderRig } from '../helpers/provider-video.js';
import { IMG, createTask, readTask, simFault, simVideoConfig, waitForTask } from '../helpers/video.js';

// The contract every video adapter passes against its simulator part, over real HTTP through the
// gateway: each mode its models declare runs to SUCCESS; every failure state of the provider ends
// FAILURE with the provider's reason and a refund; a cancel does what the adapter can (or 409);
// 429 / 5xx / malformed answers back a poll off without losing the task; a malformed create is a
// clean 502 that charges nothing; no channel secret is stored; the result is delivered (a URL with
// its expiry, or content through /content). A new video adapter is finished when it is added to
// ADAPTERS below and this suite passes.

interface AdapterCase {
  /** The channel type (the provider's folder). */
  type: string;
  /** The models the channel serves (the provider's defaults). */
  models: Record<string, ModelConfig>;
  /** Distinguishes two rows of one type (default: the type). */
  label?: string;
  /** Channel credentials (the simulator part checks what it must), or built from the simulator's URL. */
  channel: Record<string, unknown> | ((simUrl: string) => Record<string, unknown>);
  /** The simulator part's route names (fault matching) for a create and a task read. */
  routes: { create: string; get: string };
  /** Prompt markers of the simulator part (src/simulator/video-common.ts) and the fail_reason each ends with. */
  failures: { marker: string; reason: RegExp }[];
  /** Request fields a mode needs on this provider beyond prompt and images. */
  extra?: Partial<Record<VideoModeName, Record<string, unknown>>>;
  /** The gateway fetches this provider's images itself (it takes bytes): frames go inline. */
  inlineImages?: true;
}

const ADAPTERS: AdapterCase[] = [
  {
    type: 'ark',
    models: SEEDANCE_MODELS,
    channel: { api_key: 'ark-contract-secret-0001' },
    routes: { create: 'ark.video.create', get: 'ark.video.get' },
    failures: [
      { marker: '[fail]', reason: /^OutputVideoSensitiveContentDetected: / },
      { marker: '[cancel]', reason: /^cancelled: / },
      { marker: '[expire]', reason: /^expired: / },
    ],
  },
  {
    type: 'gemini',
    models: VEO_DEFAULT_MODELS,
    channel: { api_key: 'gemini-contract-secret-0002' },
    routes: { create: 'veo.video.create', get: 'veo.video.get' },
    failures: [
      { marker: '[fail]', reason: /^INTERNAL: / },
      { marker: '[moderation]', reason: /^content_filtered: / },
      { marker: '[cancel]', reason: /^CANCELLED: / },
      { marker: '[expire]', reason: /^DEADLINE_EXCEEDED: / },
    ],
    // Veo takes reference images only for 8 s videos.
    extra: { reference_image: { duration: 8 } },
    inlineImages: true,
  },
  {
    type: 'kling',
    models: KLING_DEFAULT_MODELS,
    channel: { api_key: KLING_SIMULATOR_ACCOUNT.apiKey, api_secret: KLING_SIMULATOR_ACCOUNT.apiSecret },
    routes: { create: 'kling.video.create', get: 'kling.video.get' },
    failures: [
      { marker: '[fail]', reason: /^task_failed: Video generation failed/ },
      { marker: '[moderation]', reason: /^task_failed: Failure to pass the risk control system/ },
      { marker: '[cancel]', reason: /^task_failed: The task was cancelled/ },
      { marker: '[expire]', reason: /^task_failed: The task timed out/ },
    ],
  },
  {
    type: 'dashscope',
    models: WAN_DEFAULT_MODELS,
    channel: { api_key: 'sk-dashscope-contract-secret-0004' },
    routes: { create: 'dashscope.video.create', get: 'dashscope.video.get' },
    failures: [
      { marker: '[fail]', reason: /^InternalError\.Algo: / },
      { marker: '[moderation]', reason: /^DataInspectionFailed: / },
      { marker: '[cancel]', reason: /^cancelled: / },
      { marker: '[expire]', reason: /^task_unknown: / },
    ],
  },
  {
    type: 'minimax',
    models: HAILUO_DEFAULT_MODELS,
    channel: { api_key: 'minimax-contract-secret-0005' },
    routes: { create: 'minimax.video.create', get: 'minimax.video.get' },
    // MiniMax has no cancelled or expired state: its tasks end Success or Fail.
    failures: [
      { marker: '[fail]', reason: /^1000: / },
      { marker: '[moderation]', reason: /^content_filtered_1027: / },
    ],
  },
  {
    type: 'vidu',
    models: VIDU_DEFAULT_MODELS,
    channel: { api_key: 'vidu-contract-secret-0006' },
    routes: { create: 'vidu.video.create', get: 'vidu.video.get' },
    // Vidu has no expired state: its tasks end success or failed (with err_code).
    failures: [
      { marker: '[fail]', reason: /^InternalServiceFailure: / },
      { marker: '[moderation]', reason: /^content_filtered_CreationPolicyViolation: / },
      { marker: '[cancel]', reason: /^UserCancelled: / },
    ],
  },
  {
    type: 'runway',
    models: RUNWAY_DEFAULT_MODELS,
    channel: { api_key: 'key_runway-contract-secret-0007' },
    routes: { create: 'runway.video.create', get: 'runway.video.get' },
    // Runway has no expired state: its tasks end SUCCEEDED, FAILED or CANCELLED.
    failures: [
      { marker: '[fail]', reason: /^INTERNAL\.BAD_OUTPUT\.CODE01: / },
      { marker: '[moderation]', reason: /^content_filtered_SAFETY\.OUTPUT\.VIDEO: / },
      { marker: '[cancel]', reason: /^cancelled: / },
    ],
  },
  {
    type: 'luma',
    models: LUMA_DEFAULT_MODELS,
    channel: { api_key: 'luma-contract-secret-0008' },
    routes: { create: 'luma.video.create', get: 'luma.video.get' },
    // Luma has one failed state; its failure_reason words the cause.
    failures: [
      { marker: '[fail]', reason: /^failed: Generation failed due to an internal error/ },
      { marker: '[moderation]', reason: /^failed: Your request was flagged by our moderation system/ },
      { marker: '[expire]', reason: /^failed: Generation timed out/ },
    ],
  },
  {
    type: 'pixverse',
    models: PIXVERSE_DEFAULT_MODELS,
    channel: { api_key: 'pixverse-contract-secret-0009' },
    routes: { create: 'pixverse.video.create', get: 'pixverse.video.get' },
    // Pixverse ends a video done (1), refused by moderation (7) or failed (8).
    failures: [
      { marker: '[fail]', reason: /^generation_failed: / },
      { marker: '[moderation]', reason: /^content_filtered: / },
    ],
    // The gateway fetches the frames and uploads them to Pixverse first.
    inlineImages: true,
  },
  {
    // Ark's wire format at BytePlus: the simulator's Ark part plays its model ids.
    type: 'byteplus',
    models: BYTEPLUS_DEFAULT_MODELS,
    channel: { api_key: 'byteplus-contract-secret-0006' },
    routes: { create: 'ark.video.create', get: 'ark.video.get' },
    failures: [
      { marker: '[fail]', reason: /^OutputVideoSensitiveContentDetected: / },
      { marker: '[cancel]', reason: /^cancelled: / },
      { marker: '[expire]', reason: /^expired: / },
    ],
  },
  {
    // Every request signed the Volcengine way, by the one account the simulator part knows.
    type: 'jimeng',
    models: JIMENG_DEFAULT_MODELS,
    channel: { api_key: JIMENG_SIMULATOR_ACCOUNT.apiKey, api_secret: JIMENG_SIMULATOR_ACCOUNT.apiSecret },
    routes: { create: 'jimeng.video.action', get: 'jimeng.video.action' },
    failures: [
      { marker: '[fail]', reason: /^50500: Internal Error/ },
      { marker: '[moderation]', reason: /^content_filtered_50511: Post Img Risk Not Pass/ },
      { marker: '[expire]', reason: /^expired: / },
    ],
    inlineImages: true,
  },
  {
    // fal's queue: status, then the result as a second read; a failed result read is the request's failure.
    type: 'fal',
    models: FAL_DEFAULT_MODELS,
    channel: { api_key: 'fal-contract-secret-0008' },
    routes: { create: 'fal.video.create', get: 'fal.video.status' },
    failures: [
      { marker: '[fail]', reason: /^generation_error: Video generation failed/ },
      { marker: '[moderation]', reason: /^content_filtered: The content could not be processed/ },
      { marker: '[cancel]', reason: /^client_cancelled: Request was cancelled/ },
    ],
  },
  {
    type: 'replicate',
    models: REPLICATE_DEFAULT_MODELS,
    channel: { api_key: 'r8_replicate-contract-secret-0009' },
    routes: { create: 'replicate.video.create', get: 'replicate.video.get' },
    failures: [
      { marker: '[fail]', reason: /^failed: Prediction failed/ },
      { marker: '[moderation]', reason: /^failed: The input or output was flagged as sensitive.*\(E005\)$/ },
      { marker: '[cancel]', reason: /^canceled: / },
      { marker: '[expire]', reason: /^aborted: / },
    ],
  },
  ...(['inline', 'gcs'] as const).map(
    (result): AdapterCase => ({
      // Veo on Vertex AI: the service account the simulator knows, its token endpoint; the video
      // inline (no storage_uri) or written to Cloud Storage and downloaded with the OAuth token.
      label: `vertex (${result})`,
      type: 'vertex',
      models: VERTEX_DEFAULT_MODELS,
      channel: (simUrl) => ({
        api_key: JSON.stringify({ type: 'service_account', project_id: VERTEX_SIMULATOR_ACCOUNT.project_id, client_email: VERTEX_SIMULATOR_ACCOUNT.client_email, private_key: VERTEX_SIMULATOR_ACCOUNT.private_key, token_uri: `${simUrl}/token` }),
        settings: { project: 'contract-project', region: 'europe-west4', storage_url: simUrl, ...(result === 'gcs' ? { storage_uri: 'gs://contract-bucket/veo/' } : {}) },
      }),
      routes: { create: 'vertex.video', get: 'vertex.video' },
      failures: [
        { marker: '[fail]', reason: /^INTERNAL: Video generation failed/ },
        { marker: '[moderation]', reason: /^content_filtered: The prompt could not be submitted/ },
        { marker: '[cancel]', reason: /^CANCELLED: The operation was cancelled/ },
        { marker: '[expire]', reason: /^DEADLINE_EXCEEDED: The operation did not finish/ },
      ],
      inlineImages: true,
    }),
  ),
];

const ALL_MODES: VideoModeName[] = ['text', 'first_frame', 'first_last_frame', 'reference_image'];
const CREDIT = 50_000_000;

/** Each mode the provider's models declare (config modes the adapter's caps allow), with the first model serving it. */
function declaredModes(c: AdapterCase): { mode: VideoModeName; model: string }[] {
  const adapter = providerFor(c.type)!.videos!;
  const out: { mode: VideoModeName; model: string }[] = [];
  for (const mode of ALL_MODES) {
    const model = Object.keys(c.models).find((m) => (c.models[m].modes ?? []).includes(mode) && (adapter.caps(m).modes ?? ALL_MODES).includes(mode));
    if (model) out.push({ mode, model });
  }
  return out;
}

function imagesFor(mode: VideoModeName, url: (n: number) => string): Record<string, unknown>[] {
  switch (mode) {
    case 'text':
      return [];
    case 'first_frame':
      return [{ url: url(1), role: 'first_frame' }];
    case 'first_last_frame':
      return [
        { url: url(1), role: 'first_frame' },
        { url: url(2), role: 'last_frame' },
      ];
    default:
      return [{ url: url(3), role: 'reference_image' }];
  }
}

async function cancel(rig: ProviderRig, key: string, taskId: string) {
  const res = await fetch(`${rig.gw.url}/v1/video/generations/${taskId}/cancel`, { method: 'POST', headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, body: (await res.json()) as any };
}

describe('video adapter contract', () => {
  // Frames for the image modes: providers that take URLs get them as they are; providers the
  // gateway fetches images for (`inlineImages`) get frames inline, since the gateway refuses a
  // client's loopback URL on every channel and these tests reach no public host.
  const inlineFrame = (n: number) => `data:image/png;base64,${patternImage(16, 16, n).toString('base64')}`;

  describe.each(ADAPTERS.map((c) => ({ ...c, label: c.label ?? c.type })))('$label', (c) => {
    let channel: Record<string, unknown> = typeof c.channel === 'function' ? {} : c.channel;
    const modes = declaredModes(c);
    const textModel = modes.find((m) => m.mode === 'text')?.model ?? modes[0].model;
    const bodyFor = (mode: VideoModeName, model: string, prompt = 'a corgi runs on grass') => ({ model, prompt, images: imagesFor(mode, c.inlineImages ? inlineFrame : IMG), ...c.extra?.[mode] });
    const adapter = providerFor(c.type)!.videos!;
    let rig: ProviderRig;
    beforeAll(async () => {
      rig = await providerRig(c.type, c.models, c.channel);
      if (typeof c.channel === 'function') channel = c.channel(rig.sim.url);
    });
    afterAll(async () => rig.close());

    it('declares at least one mode', () => {
      expect(modes.length).toBeGreaterThan(0);
    });

    it.each(modes)('runs mode $mode ($model) to SUCCESS and settles a charge', async ({ mode, model }) => {
      const { id, key } = await rig.gw.createKey({ creditMicros: CREDIT });
      const done = await createAndFinish(rig.gw, key, bodyFor(mode, model));
      expect(done.status, JSON.stringify(done)).toBe('SUCCESS');
      expect(done.progress).toBe('100%');
      expect(done.data).toBeTypeOf('object');
      const balance = await balanceOf(rig.gw, id);
      expect(balance).toBeLessThan(CREDIT);
      expect(balance).toBeGreaterThan(0);
    });

    it('delivers the result: a URL valid until its expiry, or content through /content; /content serves it either way', async () => {
      const { key } = await rig.gw.createKey();
      const done = await createAndFinish(rig.gw, key, bodyFor('text', textModel));
      expect(done.status).toBe('SUCCESS');
      const row = (await rig.gw.services.tasks.repo.get(done.task_id))!;
      const result = adapter.view(JSON.parse(row.data) as Record<string, unknown>).result!;
      expect(result).not.toBeNull();
      const content = `${rig.gw.url}/v1/video/generations/${done.task_id}/content`;
      if (result.kind === 'url') {
        expect(done.fail_reason).toBe(result.url);
        expect(row.url_expires_at).toBeGreaterThan(Date.now());
        await expectUrlServes(done.fail_reason);
      } else {
        expect(done.fail_reason).toBe(content);
      }
      const whole = await fetch(content, { headers: { authorization: `Bearer ${key}` } });
      expect(whole.status).toBe(200);
      expect(whole.headers.get('content-type')).toBe('video/mp4');
      expect(Buffer.from(await whole.arrayBuffer()).equals(sampleVideo())).toBe(true);
      const part = await fetch(content, { headers: { authorization: `Bearer ${key}`, range: 'bytes=4-7' } });
      expect(part.status).toBe(206);
      expect(part.headers.get('content-range')).toBe(`bytes 4-7/${sampleVideo().length}`);
      expect(Buffer.from(await part.arrayBuffer()).toString('latin1')).toBe('ftyp');
      const other = await rig.gw.createKey();
      expect((await fetch(content, { headers: { authorization: `Bearer ${other.key}` } })).status).toBe(404);
    });

    it.each(c.failures)('maps $marker to FAILURE with the provider’s reason and refunds it', async ({ marker, reason }) => {
      const { id, key } = await rig.gw.createKey({ creditMicros: CREDIT });
      const created = await createTask(rig.gw.url, key, bodyFor('text', textModel, `a corgi ${marker}`));
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      const done = await waitForTask(rig.gw.url, key, created.body.data.task_id, (r) => r.status === 'SUCCESS' || r.status === 'FAILURE');
      expect(done.status).toBe('FAILURE');
      expect(done.fail_reason).toMatch(reason);
      await expect.poll(() => balanceOf(rig.gw, id)).toBe(CREDIT);
    });

    it(adapter.cancel ? 'cancels a queued task: FAILURE "cancelled: …", credit released once' : 'answers a cancel with 409 task_not_cancellable and changes nothing', async () => {
      // Long runs, so the task is still queued when the cancel arrives.
      await simVideoConfig(rig.sim.url, { video_seconds: 5 });
      try {
        const { id, key } = await rig.gw.createKey({ creditMicros: CREDIT });
        const created = await createTask(rig.gw.url, key, bodyFor('text', textModel));
        expect(created.status).toBe(200);
        const taskId = created.body.data.task_id;
        const r = await cancel(rig, key, taskId);
        if (!adapter.cancel) {
          expect(r.status).toBe(409);
          expect(r.body).toMatchObject({ code: 'task_not_cancellable', data: null });
          expect(['SUBMITTED', 'QUEUED', 'IN_PROGRESS']).toContain((await readTask(rig.gw.url, key, taskId)).body.data.status);
          expect(await balanceOf(rig.gw, id)).toBeLessThan(CREDIT);
          return;
        }
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        expect(r.body.data.status).toBe('FAILURE');
        expect(r.body.data.fail_reason).toMatch(/^cancelled: /);
        expect(await rig.gw.services.reservations.balance(id)).toBe(CREDIT);
        // The provider's own record says cancelled: the next poll reads it and changes nothing.
        const row = (await rig.gw.services.tasks.repo.get(taskId))!;
        const raw = await adapter.get({ upstream: rig.gw.services.upstream }, bindTask(rig.gw.config.channels, row)!.target, row.upstream_id);
        expect(adapter.view(raw).state).toBe('cancelled');
        expect((await cancel(rig, key, taskId)).status).toBe(409);
        const settles = (await usageRowsOf(rig.gw.services, id)).filter((u) => u.endpoint === 'video.settle');
        expect(settles).toHaveLength(1);
        expect(Number(settles[0].cost_micros)).toBe(0);
        expect(await balanceOf(rig.gw, id)).toBe(CREDIT);
      } finally {
        await simVideoConfig(rig.sim.url, { video_seconds: 0.3 });
      }
    });

    it('answers a malformed create with a clean 502 and charges nothing', async () => {
      const { id, key } = await rig.gw.createKey({ creditMicros: CREDIT });
      await simFault(rig.sim.url, { match: c.routes.create, kind: 'malformed', count: 5 });
      try {
        const res = await createTask(rig.gw.url, key, bodyFor('text', textModel));
        expect(res.status).toBe(502);
        expect(res.body).toMatchObject({ code: 'upstream_error', data: null });
        expect(JSON.stringify(res.body)).not.toContain(String(channel.api_key));
      } finally {
        await fetch(`${rig.sim.url}/__sim/faults`, { method: 'DELETE' });
      }
      expect(await balanceOf(rig.gw, id)).toBe(CREDIT);
      const rows = await rig.gw.services.store.db.selectFrom('tasks').select('task_id').where('key_id', '=', id).execute();
      expect(rows).toHaveLength(0);
    });

    it('backs a poll off on 429 (Retry-After), 5xx and a malformed answer, keeping the task, then finishes it', async () => {
      // A gateway and simulator of its own, without a background poller: the test polls, and no other
      // gateway's poller can take the one-shot faults meant for these reads.
      const manual = await providerRig(c.type, c.models, c.channel, {}, { noPoller: true });
      try {
        const { poller, repo } = manual.gw.services.tasks;
        const interval = manual.gw.config.tasks.poll_interval_ms;
        const { id, key } = await manual.gw.createKey({ creditMicros: CREDIT });
        const created = await createTask(manual.gw.url, key, bodyFor('text', textModel));
        expect(created.status).toBe(200);
        let row = (await repo.get(created.body.data.task_id))!;

        await simFault(manual.sim.url, { match: c.routes.get, kind: 'status', status: 429 });
        let before = Date.now();
        row = await poller.pollTask(row);
        expect(row.status).toBe('SUBMITTED');
        expect(row.poll_failures).toBe(1);
        expect(row.next_poll_at).toBeGreaterThanOrEqual(before + 1000);

        await simFault(manual.sim.url, { match: c.routes.get, kind: 'status', status: 503 });
        before = Date.now();
        row = await poller.pollTask(row);
        expect(row.status).toBe('SUBMITTED');
        expect(row.poll_failures).toBe(2);
        expect(row.next_poll_at).toBeGreaterThanOrEqual(before + interval * 4);

        await simFault(manual.sim.url, { match: c.routes.get, kind: 'malformed' });
        row = await poller.pollTask(row);
        expect(row.status).toBe('SUBMITTED');
        expect(row.poll_failures).toBe(3);
        const stored = (await repo.get(row.task_id))!;
        expect({ status: stored.status, poll_failures: stored.poll_failures }).toEqual({ status: 'SUBMITTED', poll_failures: 3 });

        // The provider answers again: the task goes on to SUCCESS and is charged once.
        for (let i = 0; i < 200 && row.status !== 'SUCCESS' && row.status !== 'FAILURE'; i++) {
          await new Promise((r) => setTimeout(r, 50));
          row = await poller.pollTask(row);
        }
        expect(row.status).toBe('SUCCESS');
        const settles = (await usageRowsOf(manual.gw.services, id)).filter((u) => u.endpoint === 'video.settle');
        expect(settles).toHaveLength(1);
      } finally {
        await fetch(`${manual.sim.url}/__sim/faults`, { method: 'DELETE' });
        await manual.close();
      }
    });

    it('stores no channel secret: not in any task row (the provider object included) or log line', async () => {
      const secrets = [channel.api_key, channel.api_secret].filter((s): s is string => typeof s === 'string');
      const rows = await rig.gw.services.store.db.selectFrom('tasks').selectAll().execute();
      expect(rows.length).toBeGreaterThan(0);
      for (const s of secrets) {
        expect(JSON.stringify(rows)).not.toContain(s);
        expect(rig.gw.logs.join('\n')).not.toContain(s);
      }
    });
  });
});
