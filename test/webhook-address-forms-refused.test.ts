import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from './helpers/gateway.js';
import { createTask } from './helpers/video.js';
import { newWebhookSecret } from '../src/tasks/webhooks/signing.js';

// A callback_url whose host is an IPv6 form of a non-public address (IPv4-translated, local-use
// NAT64, Teredo, the newer documentation block …) is refused at create like 127.0.0.1 itself:
// nothing is created (so no delivery is ever tried), and the answer does not name the address.

describe('webhook callback_url in IPv6 forms of non-public addresses', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({ webhooks: { retry_delays_s: [60], tick_ms: 20 } });
  });
  afterAll(async () => gw.close());

  const forms = [
    '[::ffff:0:7f00:1]', // IPv4-translated 127.0.0.1
    '[::ffff:0:a9fe:a9fe]', // IPv4-translated 169.254.169.254
    '[64:ff9b:1::7f00:1]', // local-use NAT64
    '[2001:0:7f00:1::1]', // Teredo
    '[3fff::1]', // documentation
    '[5f00::1]', // SRv6 SIDs
  ];
  for (const host of forms) {
    it(`refuses https://${host}:8443/hook at create`, async () => {
      const k = await gw.createKey();
      await gw.services.lifecycle.secrets.rotate(k.id, newWebhookSecret(), Date.now(), 0);
      const r = await createTask(gw.url, k.key, { model: 'sim-video', prompt: 'x', callback_url: `https://${host}:8443/hook` });
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(r.body.code).toBe('invalid_request');
      expect(r.body.message).toMatch(/callback_url: the host ".*" is not, or does not resolve to, a public address/);
      const listed = (await (await fetch(`${gw.url}/v1/video/generations`, { headers: { authorization: `Bearer ${k.key}` } })).json()) as any;
      expect(listed.data.tasks).toEqual([]);
    });
  }

  it('answers a name that does not resolve as it answers a private one', async () => {
    const k = await gw.createKey();
    await gw.services.lifecycle.secrets.rotate(k.id, newWebhookSecret(), Date.now(), 0);
    const missing = await createTask(gw.url, k.key, { model: 'sim-video', prompt: 'x', callback_url: 'https://no-such-host.invalid/hook' });
    const local = await createTask(gw.url, k.key, { model: 'sim-video', prompt: 'x', callback_url: 'https://localhost/hook' });
    expect([missing.status, local.status]).toEqual([400, 400]);
    expect(missing.body.message.replace('no-such-host.invalid', 'H')).toBe(local.body.message.replace('localhost', 'H'));
    expect(local.body.message).not.toMatch(/127\.0\.0\.1|::1/);
  });
});
