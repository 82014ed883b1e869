import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { Writable } from 'node:stream';
import type { Gateway } from '../src/pipeline/gateway.js';
import { startGateway, type TestGateway } from './helpers/gateway.js';
import { errorShapeProblem } from './helpers/error-shapes.js';
import { buildRequest, rawRequest } from './helpers/raw-http.js';
import { buildApp } from '../src/app.js';
import { GatewayError, familyOf } from '../src/http/errors.js';

// Every status of the table in docs/errors.md, rendered by the app's real error handler in each family's
// shape (and parsed by each family's SDK); 404, 405, 413 and errors raised before routing.

const TABLE: Array<[number, string]> = [
  [400, 'invalid_request'],
  [400, 'invalid_task_id'],
  [400, 'unsupported_mode'],
  [401, 'invalid_api_key'],
  [403, 'model_not_allowed'],
  [403, 'insufficient_quota'],
  [404, 'model_not_found'],
  [404, 'task_not_exist'],
  [413, 'request_too_large'],
  [429, 'rate_limit_exceeded'],
  [502, 'upstream_error'],
  [503, 'no_available_channel'],
  [504, 'upstream_timeout'],
];

const OPENAI_TYPE: Record<number, string> = { 400: 'invalid_request_error', 401: 'invalid_request_error', 403: 'permission_error', 404: 'invalid_request_error', 413: 'invalid_request_error', 429: 'rate_limit_error', 502: 'server_error', 503: 'server_error', 504: 'server_error' };
const ANTHROPIC_TYPE: Record<number, string> = { 400: 'invalid_request_error', 401: 'authentication_error', 403: 'permission_error', 404: 'not_found_error', 413: 'request_too_large', 429: 'rate_limit_error', 502: 'api_error', 503: 'overloaded_error', 504: 'api_error' };

const PREFIX = { openai: '/v1/__contract', anthropic: '/v1/messages/__contract', gemini: '/v1beta/__contract', video: '/v1/video/__contract' } as const;
const GOOGLE_STATUS: Record<number, string> = { 400: 'INVALID_ARGUMENT', 401: 'UNAUTHENTICATED', 403: 'PERMISSION_DENIED', 404: 'NOT_FOUND', 413: 'INVALID_ARGUMENT', 429: 'RESOURCE_EXHAUSTED', 502: 'INTERNAL', 503: 'UNAVAILABLE', 504: 'DEADLINE_EXCEEDED' };

describe('the error contract', () => {
  let gw: TestGateway;
  let app: Gateway;
  let url: string;
  let port: number;
  let key: string;
  const logs: string[] = [];

  beforeAll(async () => {
    gw = await startGateway({ server: { host: '127.0.0.1', port: 0, body_limit_mb: 0.01 } });
    key = (await gw.createKey()).key;
    // A second app on the same services, with routes that throw each row of the table.
    app = buildApp(gw.services, { logStream: new Writable({ write: (c, _e, cb) => (logs.push(String(c)), cb()) }) });
    for (const prefix of Object.values(PREFIX)) {
      app.get<{ Params: { row: string } }>(`${prefix}/:row`, async (request) => {
        const [status, code] = TABLE[Number(request.params.row)] ?? [400, 'invalid_request'];
        // A client key pasted into a message must not come back.
        throw new GatewayError(status, code, `row ${request.params.row} (${key})`, status === 429 ? { 'retry-after': '7' } : {});
      });
      app.get(`${prefix}-crash`, async () => {
        throw new Error(`boom with ${key} at /secret/path.ts:12`);
      });
      app.post(`${prefix}-echo`, async (request) => ({ got: request.body }));
    }
    await app.listen({ host: '127.0.0.1', port: 0 });
    const addr = app.server.address();
    port = typeof addr === 'object' && addr ? addr.port : 0;
    url = `http://127.0.0.1:${port}`;
  });
  afterAll(async () => {
    await app?.close();
    await gw?.close();
  });

  it('renders every status of the table in each family shape, without keys', async () => {
    for (const family of ['openai', 'anthropic', 'gemini', 'video'] as const) {
      for (let row = 0; row < TABLE.length; row++) {
        const [status, code] = TABLE[row];
        const res = await fetch(`${url}${PREFIX[family]}/${row}`);
        const text = await res.text();
        expect(res.status).toBe(status);
        expect(res.headers.get('content-type')).toMatch(/^application\/json/);
        expect(text).not.toContain(key.slice(3, 30));
        const body = JSON.parse(text);
        expect(errorShapeProblem(family, body)).toBeNull();
        if (family === 'openai') expect(body.error).toMatchObject({ code, type: code === 'insufficient_quota' ? 'insufficient_quota' : OPENAI_TYPE[status] });
        if (family === 'anthropic') expect(body.error.type).toBe(ANTHROPIC_TYPE[status]);
        if (family === 'video') expect(body.code).toBe(code);
        if (family === 'gemini') expect(body.error).toMatchObject({ code: status, status: GOOGLE_STATUS[status] });
        if (status === 429) expect(res.headers.get('retry-after')).toBe('7');
      }
    }
  });

  it('answers an unexpected failure with a 500 in family shape, without the message or a stack', async () => {
    for (const family of ['openai', 'anthropic', 'gemini', 'video'] as const) {
      const res = await fetch(`${url}${PREFIX[family]}-crash`);
      const text = await res.text();
      expect(res.status).toBe(500);
      expect(errorShapeProblem(family, JSON.parse(text))).toBeNull();
      expect(text).not.toContain('boom');
      expect(text).not.toContain('secret');
      expect(text).not.toContain(key.slice(3, 30));
    }
    // Logged for the operator, but scrubbed there too.
    expect(logs.join('')).toContain('boom');
    expect(logs.join('')).not.toContain(key.slice(3, 30));
  });

  it('is parsed by the official SDKs into their typed errors', async () => {
    const openai = new OpenAI({ apiKey: key, baseURL: `${url}/v1`, maxRetries: 0 });
    const anthropic = new Anthropic({ apiKey: key, baseURL: url, maxRetries: 0 });
    for (let row = 0; row < TABLE.length; row++) {
      const [status, code] = TABLE[row];
      const o = await openai.get(`/__contract/${row}`).then(
        () => null,
        (e: unknown) => e,
      );
      expect(o).toBeInstanceOf(OpenAI.APIError);
      expect(o).toMatchObject({ status, code });
      const a = await anthropic.get(`/v1/messages/__contract/${row}`).then(
        () => null,
        (e: unknown) => e,
      );
      expect(a).toBeInstanceOf(Anthropic.APIError);
      expect(a).toMatchObject({ status, error: { type: 'error', error: { type: ANTHROPIC_TYPE[status] } } });
    }
    await expect(openai.get('/__contract/9')).rejects.toBeInstanceOf(OpenAI.RateLimitError);
    await expect(anthropic.get('/v1/messages/__contract/3')).rejects.toBeInstanceOf(Anthropic.AuthenticationError);
  });

  it('answers a body over server.body_limit_mb with 413 request_too_large, declared or streamed', async () => {
    const big = JSON.stringify({ model: 'sim-chat', pad: 'x'.repeat(20_000) });
    const posts = app.routeTable.routes().filter((r) => r.method === 'POST' && !r.url.includes(':'));
    expect(posts.length).toBeGreaterThanOrEqual(3);
    for (const route of posts) {
      const family = familyOf(route.url);
      // Declared: refused from the Content-Length, before auth and before reading.
      const declared = await fetch(`${url}${route.url}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: big });
      expect(declared.status, route.url).toBe(413);
      const body = await declared.json();
      expect(errorShapeProblem(family, body)).toBeNull();
      expect(JSON.stringify(body)).toContain(family === 'gemini' ? 'INVALID_ARGUMENT' : 'request_too_large');
      // Streamed (chunked, no length): refused by the body parser once past the limit.
      const chunked = buildRequest('POST', route.url, [['Content-Type', 'application/json'], ['Authorization', `Bearer ${key}`], ['Transfer-Encoding', 'chunked']], `${Buffer.byteLength(big).toString(16)}\r\n${big}\r\n0\r\n\r\n`);
      const res = await rawRequest(port, chunked);
      if (route.url.includes('__contract') || !route.url.includes('edits')) {
        expect(res.status, `${route.url} chunked`).toBe(413);
        expect(errorShapeProblem(family, JSON.parse(res.body))).toBeNull();
      } else {
        // A multipart route does not parse JSON; whatever it answers is a 4xx in shape.
        expect(res.status).toBeGreaterThanOrEqual(400);
        expect(res.status).toBeLessThan(500);
      }
    }
    // Under the limit the same route takes it.
    const small = await fetch(`${url}${PREFIX.openai}-echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
    expect(await small.json()).toEqual({ got: { a: 1 } });
  });

  it('answers unknown routes with 404 JSON in the family of the path', async () => {
    const cases: Array<[string, 'openai' | 'anthropic' | 'video' | 'plain']> = [
      ['/v1/nope', 'openai'],
      ['/v1/messages/nope', 'anthropic'],
      ['/v1/video/nope', 'video'],
      ['/nope', 'plain'],
      ['/v1/models/a/b/c', 'openai'],
    ];
    for (const [path, family] of cases) {
      const res = await fetch(`${gw.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}` } });
      expect(res.status, path).toBe(404);
      const body = await res.json();
      expect(errorShapeProblem(family, body), path).toBeNull();
      expect(JSON.stringify(body)).toContain('not_found');
    }
  });

  it('answers a wrong method on an existing path with 405 JSON and an Allow header, for every route including ones added late', async () => {
    const table = app.routeTable;
    const byPath = new Map<string, Set<string>>();
    for (const r of table.routes()) byPath.set(r.url, (byPath.get(r.url) ?? new Set()).add(r.method));
    expect(byPath.has(`${PREFIX.video}/:row`)).toBe(true);
    for (const [pattern, methods] of byPath) {
      const path = pattern.replace(/:[^/]+/g, 'abc');
      const wrong = ['DELETE', 'PUT', 'PATCH', 'POST', 'GET'].find((m) => !methods.has(m));
      // A path that takes every method (the console's "admin API is off" answer) has no wrong one.
      if (!wrong) continue;
      const res = await fetch(`${url}${path}`, { method: wrong, headers: { authorization: `Bearer ${key}` } });
      expect(res.status, `${wrong} ${path}`).toBe(405);
      const allow = res.headers.get('allow')!.split(', ');
      for (const m of methods) expect(allow).toContain(m);
      expect(allow).not.toContain(wrong);
      const body = await res.json();
      expect(errorShapeProblem(familyOf(path), body), path).toBeNull();
      expect(JSON.stringify(body)).toContain(familyOf(path) === 'anthropic' || familyOf(path) === 'gemini' ? `does not accept ${wrong}` : 'method_not_allowed');
    }
    const models = await fetch(`${gw.url}/v1/models`, { method: 'DELETE' });
    expect(models.status).toBe(405);
    expect(models.headers.get('allow')).toBe('GET, HEAD');
  });

  it('answers requests that never reach a route (bad encoding, overlong parameter, broken HTTP) in family shape', async () => {
    const badEncoding = await rawRequest(port, buildRequest('GET', '/v1/video/__contract/%E0%A4%A', []));
    expect(badEncoding.status).toBe(400);
    expect(errorShapeProblem('video', JSON.parse(badEncoding.body))).toBeNull();

    const overlong = await rawRequest(port, buildRequest('GET', `/v1/video/__contract/${'a'.repeat(300)}`, []));
    expect(overlong.status).toBe(400);
    expect(JSON.parse(overlong.body)).toMatchObject({ code: 'invalid_task_id', data: null });

    const garbage = await rawRequest(port, Buffer.from('GET /v1/messages/x HTTP/1.1\r\nHost: a\r\nBad Header\r\n\r\n'));
    expect(garbage.status).toBe(400);
    expect(errorShapeProblem('anthropic', JSON.parse(garbage.body))).toBeNull();

    const hugeHeader = await rawRequest(port, buildRequest('GET', '/v1/models', [['X-Pad', 'a'.repeat(40_000)], ['Authorization', `Bearer ${key}`]]));
    expect(hugeHeader.status).toBe(431);
    expect(errorShapeProblem('openai', JSON.parse(hugeHeader.body))).toBeNull();
    expect(hugeHeader.raw.toString('latin1')).not.toContain(key.slice(3, 30));

    const deep = await fetch(`${url}${PREFIX.openai}-echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '['.repeat(5000) + ']'.repeat(5000) });
    expect(deep.status).toBe(400);
    expect(errorShapeProblem('openai', await deep.json())).toBeNull();
  });
});
