import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from './helpers/gateway.js';
import { generateApiKey } from '../src/auth/keys.js';

function expectOpenAiError(body: any, code: string) {
  expect(Object.keys(body)).toEqual(['error']);
  expect(Object.keys(body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe('string');
  expect(body.error.message.length).toBeGreaterThan(0);
}

describe('authentication', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(async () => gw.close());

  const get = (headers: Record<string, string>) => fetch(`${gw.url}/v1/models`, { headers });

  it('rejects a request with no key', async () => {
    const res = await get({});
    expect(res.status).toBe(401);
    expectOpenAiError(await res.json(), 'invalid_api_key');
  });

  it('rejects an unknown key, a malformed header and a non-mg key', async () => {
    const attempts: Record<string, string>[] = [{ authorization: `Bearer ${generateApiKey()}` }, { authorization: 'Basic abc' }, { authorization: 'Bearer sk-123' }, { 'x-api-key': '' }];
    for (const h of attempts) {
      const res = await get(h);
      expect(res.status).toBe(401);
      expectOpenAiError(await res.json(), 'invalid_api_key');
    }
  });

  it('rejects a revoked key', async () => {
    const { id, key } = await gw.createKey();
    expect((await get({ authorization: `Bearer ${key}` })).status).toBe(200);
    expect(await gw.services.keys.revoke(id)).toBe(true);
    gw.services.authenticator.invalidate();
    const res = await get({ authorization: `Bearer ${key}` });
    expect(res.status).toBe(401);
    expectOpenAiError(await res.json(), 'invalid_api_key');
  });

  it('rejects an expired key', async () => {
    const { key } = await gw.createKey({ expiresAt: Date.now() - 1000 });
    const res = await get({ authorization: `Bearer ${key}` });
    expect(res.status).toBe(401);
    expectOpenAiError(await res.json(), 'invalid_api_key');
    const { key: later } = await gw.createKey({ expiresAt: Date.now() + 60_000 });
    expect((await get({ authorization: `Bearer ${later}` })).status).toBe(200);
  });

  it('accepts x-api-key as the Anthropic SDK sends it', async () => {
    const { key } = await gw.createKey();
    expect((await get({ 'x-api-key': key })).status).toBe(200);
  });

  it('never writes a key into logs or error bodies', async () => {
    const { key, id } = await gw.createKey();
    const unknown = generateApiKey();
    const bodies: string[] = [];
    bodies.push(await (await get({ authorization: `Bearer ${unknown}` })).text());
    bodies.push(await (await fetch(`${gw.url}/v1/models/${key}`, { headers: { authorization: `Bearer ${key}` } })).text());
    bodies.push(await (await fetch(`${gw.url}/v1/nope?k=${key}`, { headers: { authorization: `Bearer ${key}` } })).text());
    await gw.services.keys.revoke(id);
    gw.services.authenticator.invalidate();
    bodies.push(await (await get({ authorization: `Bearer ${key}` })).text());
    // Force an error log line that includes request headers, as a future log call might.
    gw.app.log.error({ req: { headers: { authorization: `Bearer ${key}`, 'x-api-key': key } } }, 'probe');
    const everything = bodies.join('\n') + gw.logs.join('\n');
    expect(gw.logs.some((l) => l.includes('probe'))).toBe(true);
    expect(everything).not.toContain(key);
    expect(everything).not.toContain(unknown);
    expect(everything).not.toContain(key.slice(3, 30));
  });
});
