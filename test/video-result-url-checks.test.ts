import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, usageRowsOf, type TestGateway } from './helpers/gateway.js';
import { startFakeProvider, type FakeProvider } from './helpers/fake-provider.js';
import { createTask, eventually, isFinished, waitForTask } from './helpers/video.js';

// A provider (or a compromised channel) hands back result links the gateway must not pass on: a
// file: URL, a data: URL, the cloud metadata address, a loopback address. Only http(s) links to
// public hosts become SUCCESS; the rest fail the task cleanly, with a reason and a refund. A
// channel marked allow_private_network (the simulator's kind) may hand out loopback links.

const URLS: Record<string, string> = {
  file: 'file:///etc/passwd',
  data: 'data:video/mp4;base64,AAAA',
  metadata: 'http://169.254.169.254/latest/meta-data/iam/security-credentials/',
  mapped: 'http://[::ffff:169.254.169.254]/latest/',
  loopback: 'http://127.0.0.1:9/v.mp4',
  public: 'https://cdn.example.com/v.mp4?X-Tos-Signature=abc',
};

describe('result links from providers', () => {
  let fake: FakeProvider;
  let gw: TestGateway;
  let key: string;
  let keyId: string;

  beforeAll(async () => {
    fake = await startFakeProvider({ videoTask: (prompt) => ({ status: 'succeeded', content: { video_url: URLS[prompt] }, usage: { total_tokens: 1000 } }) });
    const video = { kind: 'video', owned_by: 'volcengine', modes: ['text'], price: { per_million_tokens: 1 } };
    gw = await startGateway({
      simulator: { embedded: false },
      channels: [
        { name: 'ark-public', type: 'ark', base_url: fake.url, api_key: 'ark-key-123456', models: ['v-public'] },
        { name: 'ark-local', type: 'ark', base_url: fake.url, api_key: 'ark-key-123456', models: ['v-local'], allow_private_network: true },
      ],
      models: { 'v-public': video, 'v-local': video },
    });
    ({ key, id: keyId } = await gw.createKey({ creditMicros: 10_000_000 }));
  });

  afterAll(async () => {
    await gw?.close();
    await fake?.close();
  });

  const run = async (model: string, prompt: string) => {
    const created = await createTask(gw.url, key, { model, prompt });
    expect(created.status).toBe(200);
    return waitForTask(gw.url, key, created.body.data.task_id, isFinished);
  };

  it.each(['file', 'data'])('fails a task whose video URL is a %s: URL, naming only the scheme', async (prompt) => {
    const t = await run('v-public', prompt);
    expect(t.status).toBe('FAILURE');
    expect(t.fail_reason).toMatch(/^invalid_response: .*not an http\(s\) link \((file|data):\)/);
    expect(t.fail_reason).not.toContain('/etc/passwd');
  });

  it.each(['metadata', 'mapped', 'loopback'])('fails a task whose video URL points at a non-public address (%s)', async (prompt) => {
    const t = await run('v-public', prompt);
    expect(t.status).toBe('FAILURE');
    expect(t.fail_reason).toMatch(/^invalid_response: .*private, loopback or link-local address/);
  });

  it('hands out a public https link, and a loopback link only from a channel marked allow_private_network', async () => {
    expect((await run('v-public', 'public')).fail_reason).toBe(URLS.public);
    const local = await run('v-local', 'loopback');
    expect(local.status).toBe('SUCCESS');
    expect(local.fail_reason).toBe(URLS.loopback);
  });

  it('refunds the failed tasks: only the two successes were charged', async () => {
    // The status is visible a moment before the settle or refund: wait for every hold to be gone.
    await eventually(async () => (await gw.services.credit.heldCount(keyId)) === 0, 10_000, 'the settles');
    const rows = (await usageRowsOf(gw.services, keyId)).filter((r) => r.endpoint === 'video.settle');
    expect(rows.filter((r) => Number(r.status) === 200)).toHaveLength(2);
    expect(rows.filter((r) => Number(r.status) !== 200).every((r) => Number(r.cost_micros) === 0)).toBe(true);
    const held = await gw.services.credit.heldCount(keyId);
    expect(held).toBe(0);
  });
});
