import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from './helpers/gateway.js';
import { startFakeProvider, type FakeProvider } from './helpers/fake-provider.js';
import { createTask, isFinished, waitForTask } from './helpers/video.js';

// A provider that echoes the channel's secret back: in a video task's error message, inside URLs
// in the task object (URL-encoded in a query string, base64url in a token), base64 inside a longer
// Basic credential, and in chat error messages. None of it may reach a client or the store.

const SECRET = 'ak-Test/Secret+Key=42-abcdefXYZ';
const SIGNING = 'sk-Signing/Secret+Two=99-qrstuv';
const b64 = (s: string) => Buffer.from(s).toString('base64');
const b64url = (s: string) => Buffer.from(s).toString('base64url');
const FORMS = [SECRET, encodeURIComponent(SECRET), b64(SECRET).replace(/=+$/, ''), b64url(SECRET), SIGNING, encodeURIComponent(SIGNING)];

function leaks(text: string): string[] {
  return FORMS.filter((f) => text.includes(f)).concat(text.includes(b64(`user:${SECRET}`).slice(8, 30)) ? ['base64 inside a Basic credential'] : []);
}

describe('upstream secrets echoed by a provider', () => {
  let fake: FakeProvider;
  let gw: TestGateway;
  let key: string;
  let keyId: string;

  beforeAll(async () => {
    fake = await startFakeProvider({
      videoTask: (prompt) => {
        if (prompt === 'leak-fail') {
          return { status: 'failed', error: { code: 'AuthenticationError', message: `the key ${SECRET} (${b64(SECRET)}) is not valid; signed with ${encodeURIComponent(SIGNING)}` } };
        }
        return {
          status: 'succeeded',
          content: {
            video_url: `https://cdn.example.com/v.mp4?X-Tos-Signature=sig123&api_key=${encodeURIComponent(SECRET)}`,
            cover_url: `https://cdn.example.com/c.png?token=${b64url(SECRET)}`,
          },
          debug: { authorization: `Basic ${b64(`user:${SECRET}`)}` },
          usage: { total_tokens: 1000 },
        };
      },
      chat: (body) =>
        body.messages?.[0]?.content === 'four-hundred'
          ? { status: 400, json: { error: { message: `bad request for key ${b64(SECRET)}`, type: 'invalid_request_error' } } }
          : { status: 500, json: { error: { message: `upstream broke at https://x.example/?k=${encodeURIComponent(SECRET)}&s=${b64url(SIGNING)}`, type: 'server_error' } } },
    });
    gw = await startGateway({
      simulator: { embedded: false },
      relay: { max_attempts: 1 },
      channels: [
        // Some providers sign with a second secret; it is scrubbed like the key.
        { name: 'ark-fake', type: 'ark', base_url: fake.url, api_key: SECRET, models: ['fake-video'], ...signingSecret() },
        { name: 'oai-fake', type: 'openai', base_url: `${fake.url}/v1`, api_key: SECRET, models: ['fake-chat'] },
      ],
      models: {
        'fake-video': { kind: 'video', owned_by: 'volcengine', modes: ['text'], price: { per_million_tokens: 1 } },
        'fake-chat': { kind: 'chat', owned_by: 'openai' },
      },
    });
    ({ key, id: keyId } = await gw.createKey());
  });

  afterAll(async () => {
    await gw?.close();
    await fake?.close();
  });

  async function storedRows() {
    return gw.services.store.db.selectFrom('tasks').select(['fail_reason', 'data']).where('key_id', '=', keyId).execute();
  }

  it('scrubs a failed task: fail_reason and data, as answered and as stored', async () => {
    const created = await createTask(gw.url, key, { model: 'fake-video', prompt: 'leak-fail' });
    expect(created.status).toBe(200);
    const done = await waitForTask(gw.url, key, created.body.data.task_id, isFinished);
    expect(done.status).toBe('FAILURE');
    expect(done.fail_reason).toMatch(/^AuthenticationError: the key \[redacted\]/);
    expect(leaks(JSON.stringify(done))).toEqual([]);
    expect(leaks(JSON.stringify(await storedRows()))).toEqual([]);
  });

  it('scrubs URLs and encoded forms in a successful task, keeping the URL and its signature', async () => {
    const created = await createTask(gw.url, key, { model: 'fake-video', prompt: 'leak-url' });
    const done = await waitForTask(gw.url, key, created.body.data.task_id, isFinished);
    expect(done.status).toBe('SUCCESS');
    expect(done.fail_reason).toMatch(/^https:\/\/cdn\.example\.com\/v\.mp4\?X-Tos-Signature=sig123&api_key=\[redacted\]$/);
    expect(leaks(JSON.stringify(done))).toEqual([]);
    expect(leaks(JSON.stringify(await storedRows()))).toEqual([]);
  });

  it('scrubs encoded forms from chat error messages', async () => {
    for (const content of ['four-hundred', 'five-hundred']) {
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'fake-chat', messages: [{ role: 'user', content }] }),
      });
      const text = await res.text();
      expect([400, 502]).toContain(res.status);
      expect(text).toContain('[redacted]');
      expect(leaks(text)).toEqual([]);
    }
    expect(leaks(gw.logs.join(''))).toEqual([]);
  });
});

/** `api_secret` where the channel schema has it (a provider that signs requests with a second secret). */
function signingSecret(): Record<string, string> {
  return { api_secret: SIGNING };
}
