import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from './helpers/gateway.js';
import { IMG, createTask, readTask, simVideoStats } from './helpers/video.js';

// Bad video requests get a clear 4xx in the video family's shape, and never reach the provider.

describe('video request validation and task ownership', () => {
  let gw: TestGateway;
  let key: string;
  beforeAll(async () => {
    gw = await startGateway();
    key = (await gw.createKey()).key;
  });
  afterAll(async () => gw.close());

  async function expect400(body: unknown, code = 'invalid_request', messageLike?: RegExp): Promise<any> {
    const before = Object.keys((await simVideoStats(gw.services.simulator!.url)).tasks).length;
    const res = await createTask(gw.url, key, body);
    expect(res.status).toBe(400);
    expect(Object.keys(res.body).sort()).toEqual(['code', 'data', 'message']);
    expect(res.body.code).toBe(code);
    expect(res.body.data).toBeNull();
    expect(typeof res.body.message).toBe('string');
    if (messageLike) expect(res.body.message).toMatch(messageLike);
    expect(Object.keys((await simVideoStats(gw.services.simulator!.url)).tasks).length).toBe(before);
    return res.body;
  }

  it('rejects mixed image roles', async () => {
    await expect400({ model: 'sim-video', prompt: 'x', images: [{ url: IMG(1), role: 'first_frame' }, { url: IMG(2), role: 'reference_image' }] }, 'invalid_request', /mixed/);
    await expect400({ model: 'sim-video', prompt: 'x', images: [IMG(1), IMG(2)] }, 'invalid_request', /roles/);
    await expect400({ model: 'sim-video', prompt: 'x', images: [{ url: IMG(1), role: 'last_frame' }] });
    await expect400({ model: 'sim-video', prompt: 'x', images: [{ url: IMG(1), role: 'first_frame' }, { url: IMG(2), role: 'first_frame' }] });
    await expect400({ model: 'sim-video', prompt: 'x', images: [1, 2, 3, 4, 5].map((n) => ({ url: IMG(n), role: 'reference_image' })) }, 'invalid_request', /At most 4/);
  });

  it('rejects a mode the model does not declare with unsupported_mode', async () => {
    // lite t2v: text only
    await expect400({ model: 'doubao-seedance-1-0-lite-t2v-250428', image: IMG(1) }, 'unsupported_mode', /first_frame/);
    // 1.0 pro: text and first frame only
    await expect400(
      { model: 'doubao-seedance-1-0-pro-250528', prompt: 'x', images: [{ url: IMG(1), role: 'first_frame' }, { url: IMG(2), role: 'last_frame' }] },
      'unsupported_mode',
    );
    await expect400({ model: 'doubao-seedance-1-0-lite-i2v-250428', prompt: 'text only' }, 'unsupported_mode', /text/);
  });

  it('rejects malformed fields, naming them', async () => {
    await expect400({ prompt: 'no model' }, 'invalid_request', /model/);
    await expect400({ model: 'sim-video' }, 'invalid_request', /prompt is required/);
    await expect400({ model: 'sim-video', prompt: 42 }, 'invalid_request', /prompt/);
    await expect400({ model: 'sim-video', prompt: 'x', duration: 'five' }, 'invalid_request', /duration/);
    await expect400({ model: 'sim-video', prompt: 'x', duration: 2.5 }, 'invalid_request', /duration/);
    await expect400({ model: 'sim-video', prompt: 'x', seconds: 'abc' }, 'invalid_request', /seconds/);
    await expect400({ model: 'sim-video', prompt: 'x', seconds: '5', duration: 6 }, 'invalid_request', /disagree/);
    await expect400({ model: 'sim-video', prompt: 'x', resolution: '4k' }, 'invalid_request', /resolution/);
    await expect400({ model: 'sim-video', prompt: 'x', ratio: 'wide' }, 'invalid_request', /ratio/);
    await expect400({ model: 'sim-video', prompt: 'x', seed: -2 }, 'invalid_request', /seed/);
    await expect400({ model: 'sim-video', prompt: 'x', watermark: 'yes' }, 'invalid_request', /watermark/);
    await expect400({ model: 'sim-video', prompt: 'x', images: 'not-a-list' }, 'invalid_request', /images/);
    await expect400({ model: 'sim-video', prompt: 'x', images: ['ftp://x/y.png'] }, 'invalid_request', /images\[0\]/);
    await expect400({ model: 'sim-video', prompt: 'x', images: [{ url: IMG(1), role: 'middle' }] }, 'invalid_request', /role/);
    await expect400({ model: 'sim-video', image: IMG(1), images: [IMG(2)] }, 'invalid_request', /either/);
    await expect400({ model: 'sim-video', prompt: 'x', metadata: [] }, 'invalid_request', /metadata/);
    await expect400({ model: 'sim-video', prompt: 'x', metadata: { model: 'other' } }, 'invalid_request', /metadata.model/);
    await expect400({ model: 'sim-video', prompt: 'x', size: '1280x720' }, 'invalid_request', /Unknown field "size"/);
    await expect400([1, 2], 'invalid_request');
  });

  it('answers a body that is not JSON with 400 in the video shape', async () => {
    const res = await fetch(`${gw.url}/v1/video/generations`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: '{"model":' });
    expect(res.status).toBe(400);
    const body = (await res.json()) as any;
    expect(body.data).toBeNull();
    expect(typeof body.code).toBe('string');
  });

  it('answers an unknown model 404 model_not_found and a model outside the allow-list 403 model_not_allowed', async () => {
    const res = await createTask(gw.url, key, { model: 'no-such-video', prompt: 'x' });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 'model_not_found', message: expect.any(String), data: null });
    const limited = await gw.createKey({ models: ['sim-chat'] });
    const denied = await createTask(gw.url, limited.key, { model: 'sim-video', prompt: 'x' });
    expect(denied.status).toBe(403);
    expect(denied.body.code).toBe('model_not_allowed');
    const chat = await createTask(gw.url, key, { model: 'sim-chat', prompt: 'x' });
    expect(chat.status).toBe(400);
  });

  it('answers 403 insufficient_quota when the key cannot cover the estimate, creating nothing', async () => {
    const poor = await gw.createKey({ creditMicros: 10 });
    const res = await createTask(gw.url, poor.key, { model: 'doubao-seedance-1-0-pro-250528', prompt: 'expensive' });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('insufficient_quota');
    expect(await gw.services.credit.spendable(poor.id)).toBe(10);
  });

  it('answers malformed task ids 400 invalid_task_id', async () => {
    for (const id of ['bad!id', 'a'.repeat(129), 'spa%20ce', '%E2%9C%93']) {
      const res = await readTask(gw.url, key, id);
      expect(res.status, id).toBe(400);
      expect(res.body).toEqual({ code: 'invalid_task_id', message: expect.any(String), data: null });
    }
  });

  it('answers an unknown task and another key’s task alike: 404 task_not_exist', async () => {
    const unknown = await readTask(gw.url, key, 'cgt-20250331175019-68d9t');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ code: 'task_not_exist', message: expect.any(String), data: null });

    const created = await createTask(gw.url, key, { model: 'sim-video', prompt: 'mine' });
    expect(created.status).toBe(200);
    const other = await gw.createKey();
    const theirs = await readTask(gw.url, other.key, created.body.data.task_id);
    expect(theirs.status).toBe(404);
    expect(theirs.body).toEqual(unknown.body);
    const mine = await readTask(gw.url, key, created.body.data.task_id);
    expect(mine.status).toBe(200);
  });

  it('requires a key on both endpoints', async () => {
    const res = await fetch(`${gw.url}/v1/video/generations/cgt-20250331175019-68d9t`);
    expect(res.status).toBe(401);
    expect(((await res.json()) as any).data).toBeNull();
    const post = await fetch(`${gw.url}/v1/video/generations`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(post.status).toBe(401);
  });
});
