import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SIMULATOR_MODELS } from '../src/config-file/defaults.js';
import { startGateway, type TestGateway } from './helpers/gateway.js';
import { eventually } from './helpers/eventually.js';

// Errors point to the fix (docs/errors.md): an unknown model names GET /v1/models, an expired or
// revoked key says so (and nothing about any other key), and an upstream connection failure's log
// line names the channel.

const json = { 'content-type': 'application/json' };

describe('errors that point to the fix', () => {
  let gw: TestGateway;
  let key: string;
  beforeAll(async () => {
    gw = await startGateway({
      channels: [
        { name: 'simulator', type: 'simulator', models: Object.keys(SIMULATOR_MODELS) },
        // Nothing listens on port 9: every call to this channel fails to connect.
        { name: 'dead-openai', type: 'openai', base_url: 'http://127.0.0.1:9', api_key: 'sk-test', models: ['dead-chat'] },
      ],
      models: { ...SIMULATOR_MODELS, 'dead-chat': { kind: 'chat' } },
    });
    key = (await gw.createKey()).key;
  });
  afterAll(async () => {
    await gw.close();
  });

  it('names GET /v1/models for an unknown chat or image model, in each family', async () => {
    const calls: [string, Record<string, unknown>, (b: any) => string][] = [
      ['/v1/chat/completions', { model: 'no-such-chat', messages: [{ role: 'user', content: 'hi' }] }, (b) => b.error.message],
      ['/v1/messages', { model: 'no-such-chat', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }, (b) => b.error.message],
      ['/v1/images/generations', { model: 'no-such-image', prompt: 'a cat' }, (b) => b.error.message],
      ['/v1beta/models/no-such-chat:generateContent', { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }, (b) => b.error.message],
    ];
    for (const [path, body, message] of calls) {
      const res = await fetch(`${gw.url}${path}`, { method: 'POST', headers: { ...json, authorization: `Bearer ${key}` }, body: JSON.stringify(body) });
      expect(res.status, path).toBe(404);
      expect(message(await res.json()), path).toMatch(/does not exist .*GET \/v1\/models/);
    }
  });

  it('tells the holder of a revoked or expired key which it is, and nothing to anyone else', async () => {
    const revoked = await gw.createKey({ name: 'gone' });
    await gw.services.keys.revoke(revoked.id);
    const expired = await gw.createKey({ name: 'old', expiresAt: Date.parse('2026-01-02T03:04:05Z') });
    const unknown = 'mg-' + 'A'.repeat(48);
    const answer = async (k: string, path = '/v1/chat/completions') => {
      const res = await fetch(`${gw.url}${path}`, { method: 'POST', headers: { ...json, authorization: `Bearer ${k}` }, body: JSON.stringify({ model: 'sim-chat', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }) });
      expect(res.status).toBe(401);
      return ((await res.json()) as { error: { message: string } }).error.message;
    };
    // The front door (chat completions) and Fastify's routes (messages) say the same.
    for (const path of ['/v1/chat/completions', '/v1/messages']) {
      expect(await answer(revoked.key, path)).toMatch(/has been revoked/);
      expect(await answer(expired.key, path)).toMatch(/expired at 2026-01-02T03:04:05\.000Z/);
      const plain = await answer(unknown, path);
      expect(plain).not.toMatch(/revoked|expired/);
      expect(plain).toMatch(/Invalid API key/);
    }
  });

  it('logs an upstream connection failure with the channel it tried', async () => {
    const res = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { ...json, authorization: `Bearer ${key}` }, body: JSON.stringify({ model: 'dead-chat', messages: [{ role: 'user', content: 'hi' }] }) });
    expect(res.status).toBe(502);
    const body = (await res.json()) as { error: { message: string } };
    // The answer keeps the channel to the operator.
    expect(body.error.message).not.toContain('dead-openai');
    const line = await eventually(() => gw.logs.find((l) => l.includes('request failed') && l.includes('dead-openai')), 5000, 'the log line');
    const entry = JSON.parse(line) as { msg: string; upstream: { model: string; channels: { channel: string; kind: string }[] } };
    expect(entry.msg).toMatch(/^request failed: upstream channel "dead-openai": cannot connect to the upstream \(ECONNREFUSED\)/);
    expect(entry.upstream).toMatchObject({ model: 'dead-chat', channels: [{ channel: 'dead-openai', kind: 'connect' }] });
    expect(line).not.toContain('sk-test');
  });
});

describe('docs/errors.md', () => {
  let gw: TestGateway;
  let key: string;
  beforeAll(async () => {
    gw = await startGateway();
    key = (await gw.createKey()).key;
  });
  afterAll(async () => {
    await gw.close();
  });

  it("shows each family's error shape as the gateway answers it", async () => {
    const doc = readFileSync(join(__dirname, '..', 'docs', 'errors.md'), 'utf8');
    const section = doc.slice(doc.indexOf('## The shapes, by example'), doc.indexOf('## Errors that point to the fix'));
    const shown = [...section.matchAll(/```json\n(.*)\n```/g)].map((m) => JSON.parse(m[1]) as unknown);
    const auth = { authorization: `Bearer ${key}` };
    const chat = { model: 'no-such-model', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] };
    const post = (path: string, body: unknown) => fetch(`${gw.url}${path}`, { method: 'POST', headers: { ...json, ...auth }, body: JSON.stringify(body) });
    const answers = [
      await post('/v1/chat/completions', chat),
      await post('/v1/messages', chat),
      await post('/v1beta/models/no-such-model:generateContent', { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }),
      await fetch(`${gw.url}/v1/video/generations/cgt-20261121235342-wkivi`, { headers: auth }),
      await fetch(`${gw.url}/admin/api/keys`),
      await fetch(`${gw.url}/nothing-here`),
    ];
    expect(shown).toHaveLength(answers.length);
    for (let i = 0; i < answers.length; i++) expect(shown[i], `example ${i + 1}`).toEqual(await answers[i].json());
  });
});
