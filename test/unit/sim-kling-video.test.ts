import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHmac } from 'node:crypto';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';
import { sampleVideo } from '../../src/simulator/mp4.js';
import { KLING_SIMULATOR_ACCOUNT } from '../../src/providers/kling/wire.js';

const KLING_SIM_ACCESS_KEY = KLING_SIMULATOR_ACCOUNT.apiKey;
const KLING_SIM_SECRET_KEY = KLING_SIMULATOR_ACCOUNT.apiSecret;
import { eventually, simFault } from '../helpers/video.js';

// The simulator's Kling part, spoken to directly in Kling's wire format with per-request JWTs.

function jwt(claims: Record<string, unknown>, secret = KLING_SIM_SECRET_KEY, header: Record<string, unknown> = { alg: 'HS256', typ: 'JWT' }): string {
  const enc = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const head = `${enc(header)}.${enc(claims)}`;
  return `${head}.${createHmac('sha256', secret).update(head).digest('base64url')}`;
}
const now = () => Math.floor(Date.now() / 1000);
const good = () => jwt({ iss: KLING_SIM_ACCESS_KEY, exp: now() + 1800, nbf: now() - 5 });

describe('simulator: Kling video tasks', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ videoSeconds: 0.3, urlTtlS: 3600 });
  });
  afterAll(async () => sim.close());

  async function call(method: string, path: string, body?: unknown, token = good()) {
    const res = await fetch(`${sim.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  }
  const until = (kind: string, id: string, status: string) =>
    eventually(async () => {
      const t = await call('GET', `/v1/videos/${kind}/${id}`);
      return t.body.data?.task_status === status ? t.body.data : undefined;
    }, 10_000, status);

  it('creates text2video tasks in the code/message envelope and moves submitted → processing → succeed', async () => {
    const created = await call('POST', '/v1/videos/text2video', { model_name: 'kling-v2-6', prompt: 'a corgi', mode: 'pro', duration: '10', aspect_ratio: '9:16', sound: 'on', external_task_id: 'mine-1' });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ code: 0, message: 'SUCCEED', data: { task_status: 'submitted', task_info: { external_task_id: 'mine-1' } } });
    expect(created.body.data.task_id).toMatch(/^[1-9][0-9]{17}$/);
    expect(typeof created.body.request_id).toBe('string');
    const done = await until('text2video', created.body.data.task_id, 'succeed');
    expect(done.task_result.videos).toHaveLength(1);
    expect(done.task_result.videos[0]).toMatchObject({ duration: '10.042', url: expect.stringMatching(/\.mp4$/) });
    expect(done.updated_at).toBeGreaterThanOrEqual(done.created_at);
    // The result is a public link: no key needed, Range honoured.
    const file = await fetch(done.task_result.videos[0].url, { headers: { range: 'bytes=10-' } });
    expect(file.status).toBe(206);
    expect(Buffer.from(await file.arrayBuffer()).equals(sampleVideo().subarray(10))).toBe(true);
  });

  it('reads a task only under the path it was created at', async () => {
    const { body } = await call('POST', '/v1/videos/image2video', { model_name: 'kling-v1-6', image: 'https://example.com/a.png', image_tail: 'https://example.com/b.png', prompt: 'p' });
    expect(body.code).toBe(0);
    expect((await call('GET', `/v1/videos/image2video/${body.data.task_id}`)).status).toBe(200);
    const wrong = await call('GET', `/v1/videos/text2video/${body.data.task_id}`);
    expect(wrong.status).toBe(404);
    expect(wrong.body.code).toBe(1203);
  });

  it('verifies the JWT: empty, malformed, wrong secret, unknown issuer, not yet valid, expired', async () => {
    const body = { prompt: 'x' };
    const noAuth = await fetch(`${sim.url}/v1/videos/text2video`, { method: 'POST', body: JSON.stringify(body) });
    expect(noAuth.status).toBe(401);
    expect(((await noAuth.json()) as any).code).toBe(1001);
    const cases: [string, number][] = [
      ['not-a-jwt', 1002],
      [jwt({ iss: KLING_SIM_ACCESS_KEY, exp: now() + 60 }, 'wrong-secret'), 1002],
      [jwt({ iss: KLING_SIM_ACCESS_KEY, exp: now() + 60 }, KLING_SIM_SECRET_KEY, { alg: 'none' }), 1002],
      [jwt({ iss: 'someone-else', exp: now() + 60 }), 1000],
      [jwt({ iss: KLING_SIM_ACCESS_KEY, exp: now() + 600, nbf: now() + 300 }), 1003],
      [jwt({ iss: KLING_SIM_ACCESS_KEY, exp: now() - 1 }), 1004],
    ];
    for (const [token, code] of cases) {
      const res = await call('POST', '/v1/videos/text2video', body, token);
      expect(res.status, token).toBe(401);
      expect(res.body.code, token).toBe(code);
    }
  });

  it('refuses values the model or endpoint does not take', async () => {
    const cases: [string, unknown, RegExp][] = [
      ['text2video', { prompt: 'x', duration: 5 }, /"5" or "10"/],
      ['text2video', { prompt: 'x', aspect_ratio: '4:3' }, /16:9, 9:16, 1:1/],
      ['text2video', { prompt: 'x', model_name: 'kling-v9' }, /kling-v1,/],
      ['text2video', { prompt: 'x', sound: 'on' }, /sound is not supported/],
      ['text2video', {}, /prompt is required/],
      ['image2video', { prompt: 'x' }, /image is required/],
      ['image2video', { image: 'data:image/png;base64,AAAA' }, /data: prefix/],
      ['image2video', { model_name: 'kling-v2-master', image: 'https://e/a.png', image_tail: 'https://e/b.png' }, /image_tail is not supported/],
    ];
    for (const [kind, body, message] of cases) {
      const res = await call('POST', `/v1/videos/${kind}`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe(1201);
      expect(res.body.message).toMatch(message);
    }
  });

  it('fails tasks by marker with task_status_msg, and injects 429 / 5xx with Kling codes', async () => {
    const failed = await call('POST', '/v1/videos/text2video', { prompt: 'x [fail]' });
    expect((await until('text2video', failed.body.data.task_id, 'failed')).task_status_msg).toMatch(/failed/);
    const moderated = await call('POST', '/v1/videos/text2video', { prompt: 'x [moderation]' });
    const m = await until('text2video', moderated.body.data.task_id, 'failed');
    expect(m.task_status_msg).toMatch(/risk control/);
    expect(m.task_result).toBeUndefined();
    await simFault(sim.url, { match: 'kling.video.get', kind: 'status', status: 429 });
    const limited = await call('GET', `/v1/videos/text2video/${failed.body.data.task_id}`);
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe(1302);
    await simFault(sim.url, { match: 'kling.video.create', kind: 'status', status: 500 });
    const broken = await call('POST', '/v1/videos/text2video', { prompt: 'x' });
    expect(broken.status).toBe(500);
    expect(broken.body.code).toBe(5000);
  });
});
