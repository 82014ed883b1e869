import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { startGateway, type TestGateway } from './helpers/gateway.js';
import { createTask, eventually, readTask, waitForTask } from './helpers/video.js';
import { startReceiver, webhookHeaders } from './helpers/webhook-receiver.js';
import { newWebhookSecret } from '../src/tasks/webhooks/signing.js';
import { insertOutbox } from '../src/store/repos/webhook-outbox.js';

// Completion webhooks: the TaskRecord envelope POSTed on terminal states (and chosen progress
// moves), signed per Standard Webhooks and verified here with the `standardwebhooks` package as a
// receiver would; retried with the same webhook-id; refused for non-public addresses.

async function keyWithSecret(gw: TestGateway) {
  const k = await gw.createKey();
  const secret = newWebhookSecret();
  await gw.services.lifecycle.secrets.rotate(k.id, secret, Date.now(), 0);
  return { ...k, secret };
}

describe('completion webhooks', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({
      simulator: { embedded: true, video_seconds: 0.6 },
      webhooks: { allow_insecure: true, retry_delays_s: [0.05, 0.05, 0.05], tick_ms: 20 },
    });
  });
  afterAll(async () => gw.close());

  it('POSTs the TaskRecord envelope of a SUCCESS, signed so that standardwebhooks verifies it', async () => {
    const rx = await startReceiver();
    try {
      const k = await keyWithSecret(gw);
      const created = await createTask(gw.url, k.key, { model: 'sim-video', prompt: 'a corgi', callback_url: rx.url });
      expect(created.status).toBe(200);
      const id = created.body.data.task_id;
      await waitForTask(gw.url, k.key, id, (r) => r.status === 'SUCCESS');
      await eventually(() => rx.received.length >= 1, 10_000, 'the webhook');
      const hook = rx.received[0];
      expect(hook.headers['content-type']).toBe('application/json');
      const payload = new Webhook(k.secret).verify(hook.body, webhookHeaders(hook.headers)) as any;
      expect(payload.code).toBe('success');
      expect(payload.message).toBe('');
      const read = await readTask(gw.url, k.key, id);
      expect(payload.data).toEqual(read.body.data);
      expect(() => new Webhook(newWebhookSecret()).verify(hook.body, webhookHeaders(hook.headers))).toThrow();
      // One terminal state, one delivery.
      await new Promise((r) => setTimeout(r, 200));
      expect(rx.received).toHaveLength(1);
    } finally {
      await rx.close();
    }
  });

  it('retries after the receiver answered 500 twice, with the same webhook-id, and stops at the 2xx', async () => {
    const rx = await startReceiver([500, 500]);
    try {
      const k = await keyWithSecret(gw);
      const created = await createTask(gw.url, k.key, { model: 'sim-video', prompt: '[fail] a corgi', callback_url: rx.url });
      const id = created.body.data.task_id;
      await eventually(() => rx.received.length >= 3, 10_000, 'three attempts');
      await new Promise((r) => setTimeout(r, 300));
      expect(rx.received.map((h) => h.answered)).toEqual([500, 500, 200]);
      const ids = new Set(rx.received.map((h) => h.headers['webhook-id']));
      expect(ids.size).toBe(1);
      for (const h of rx.received) {
        const payload = new Webhook(k.secret).verify(h.body, webhookHeaders(h.headers)) as any;
        expect(payload.data.task_id).toBe(id);
        expect(payload.data.status).toBe('FAILURE');
      }
      const [row] = await gw.services.lifecycle.outbox.forTask(id);
      expect(row.state).toBe('delivered');
      expect(row.attempts).toBe(3);
    } finally {
      await rx.close();
    }
  });

  it('sends progress moves too when callback_events asks for them', async () => {
    const rx = await startReceiver();
    try {
      const k = await keyWithSecret(gw);
      const created = await createTask(gw.url, k.key, { model: 'sim-video', prompt: 'a corgi', callback_url: rx.url, callback_events: ['IN_PROGRESS', 'SUCCESS'] });
      await waitForTask(gw.url, k.key, created.body.data.task_id, (r) => r.status === 'SUCCESS');
      await eventually(() => rx.received.length >= 2, 10_000, 'two webhooks');
      const statuses = rx.received.map((h) => (new Webhook(k.secret).verify(h.body, webhookHeaders(h.headers)) as any).data.status).sort();
      expect(statuses).toEqual(['IN_PROGRESS', 'SUCCESS']);
      expect(new Set(rx.received.map((h) => h.headers['webhook-id'])).size).toBe(2);
    } finally {
      await rx.close();
    }
  });

  it('refuses a create without a signing secret, with a bad URL or with bad events; nothing is created', async () => {
    const plain = await gw.createKey();
    const noSecret = await createTask(gw.url, plain.key, { model: 'sim-video', prompt: 'x', callback_url: 'http://127.0.0.1:9/hook' });
    expect(noSecret.status).toBe(400);
    expect(noSecret.body.code).toBe('webhook_secret_missing');
    const k = await keyWithSecret(gw);
    for (const [body, param] of [
      [{ callback_url: 'ftp://example.com/x' }, 'callback_url'],
      [{ callback_url: 'not a url' }, 'callback_url'],
      [{ callback_url: 'http://example.com/hook' }, 'callback_url'],
      [{ callback_url: 'https://user:pw@example.com/hook' }, 'callback_url'],
      [{ callback_url: 'http://127.0.0.1:9/hook', callback_events: ['DONE'] }, 'callback_events'],
      [{ callback_events: ['SUCCESS'] }, 'callback_events'],
    ] as const) {
      const r = await createTask(gw.url, k.key, { model: 'sim-video', prompt: 'x', ...body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.code).toBe('invalid_request');
      expect(r.body.message).toContain(param);
    }
    const listed = await (await fetch(`${gw.url}/v1/video/generations`, { headers: { authorization: `Bearer ${k.key}` } })).json();
    expect((listed as any).data.tasks).toEqual([]);
  });
});

describe('webhook address checks (allow_insecure off)', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({ webhooks: { retry_delays_s: [60], tick_ms: 20 } });
  });
  afterAll(async () => gw.close());

  for (const url of ['https://10.0.0.1/hook', 'https://169.254.169.254/latest/meta-data', 'https://[::1]/hook', 'https://192.168.1.10/hook', 'https://localhost/hook', 'http://127.0.0.1:9/hook']) {
    it(`refuses callback_url ${url} at create`, async () => {
      const k = await keyWithSecret(gw);
      const r = await createTask(gw.url, k.key, { model: 'sim-video', prompt: 'x', callback_url: url });
      expect(r.status).toBe(400);
      expect(r.body.code).toBe('invalid_request');
      expect(r.body.data).toBeNull();
    });
  }

  it('refuses to deliver to a name that resolves to a private address (checked again at send time)', async () => {
    const k = await keyWithSecret(gw);
    const now = Date.now();
    const id = `msg_test${now}`;
    await insertOutbox(gw.services.store.db, {
      id, task_id: 'cgt-20250101000000-aaaaa', key_id: k.id, url: 'https://localhost:9/hook', event: 'task.success', payload: '{}', state: 'pending',
      attempts: 0, next_attempt_at: now, lease_owner: null, lease_until: 0, last_status: 0, last_error: '', created_at: now, delivered_at: 0,
    });
    const row = await eventually(async () => {
      const [r] = await gw.services.lifecycle.outbox.forTask('cgt-20250101000000-aaaaa');
      return r && r.attempts === 1 && r;
    }, 10_000, 'the refused attempt');
    expect(row.state).toBe('pending');
    expect(row.last_status).toBe(0);
    expect(row.last_error).toMatch(/not a public address/);
  });
});
