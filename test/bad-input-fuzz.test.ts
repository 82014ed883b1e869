import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from './helpers/gateway.js';
import { buildRequest, rawRequest, type RawResponse } from './helpers/raw-http.js';
import { errorShapeProblem } from './helpers/error-shapes.js';
import { familyOf } from '../src/http/errors.js';
import type { RouteInfo } from '../src/http/route-table.js';
import { seededRandom } from './helpers/prng.js';

// Hundreds of malformed requests against every route the app has when the test runs (read from
// the app's route table, so routes added later are covered without editing this file). Every
// answer must be a 4xx in the family shape of its path — never a 5xx, never a dropped connection —
// no answer may contain a key, and the gateway must still serve afterwards.
// The generator is seeded: FUZZ_SEED=<n> reproduces a run; the failing case's name is printed.

const SEED = Number(process.env.FUZZ_SEED ?? 20261121);
const MIN_CASES = 600;
/** Random combinations on top of the systematic cases. */
const RANDOM_CASES = 250;
const BODY_LIMIT_MB = 1;

interface Case {
  name: string;
  target: string;
  method: string;
  bytes: Buffer;
  /** Must be a 4xx; otherwise (an odd but legal request) anything but a 5xx. */
  strict: boolean;
}

type Header = [string, string | Buffer];

/** A model of the right kind for the route, so body cases get past "unknown model" to the real validation. */
function modelFor(url: string): string {
  if (url.includes('/messages')) return 'sim-claude';
  if (url.includes('/images')) return 'sim-image';
  if (url.includes('/video')) return 'sim-video';
  return 'sim-chat';
}

function fillParams(url: string, value = ''): string {
  return url.replace(/:([A-Za-z_]+)/g, (_m, name: string) => value || (name.includes('task') ? 'cgt-20250101000000-abcde' : 'no-such-thing'));
}

function nested(depth: number, open: string, close: string, leaf = '1'): string {
  return open.repeat(depth) + leaf + close.repeat(depth);
}

function generateCases(routes: RouteInfo[], key: string, otherKey: string, random: () => number): Case[] {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)];
  const auth: Header = ['Authorization', `Bearer ${key}`];
  const json: Header = ['Content-Type', 'application/json'];
  const cases: Case[] = [];
  const add = (name: string, method: string, target: string, headers: Header[], body?: Buffer | string, strict = true) =>
    cases.push({ name: `${method} ${target.slice(0, 120)} :: ${name}`, method, target, bytes: buildRequest(method, target, headers, body), strict });
  const addRaw = (name: string, method: string, target: string, bytes: Buffer, strict = true) => cases.push({ name: `${method} ${target.slice(0, 120)} :: ${name}`, method, target, bytes, strict });

  const paths = new Map<string, Set<string>>();
  for (const r of routes) paths.set(r.url, (paths.get(r.url) ?? new Set()).add(r.method));

  const badAuth: Array<[string, Header[]]> = [
    ['no key', []],
    ['empty bearer', [['Authorization', 'Bearer']]],
    ['truncated key', [['Authorization', `Bearer ${key.slice(0, -1)}`]]],
    ['basic auth', [['Authorization', `Basic ${Buffer.from(`u:${key}`).toString('base64')}`]]],
    ['key plus junk', [['Authorization', `Bearer ${key} extra`]]],
    ['obs-text in key', [['x-api-key', Buffer.concat([Buffer.from(key), Buffer.from([0xff, 0xfe])])]]],
    ['invalid utf-8 in header', [['Authorization', Buffer.from([0x42, 0x65, 0x61, 0x72, 0x65, 0x72, 0x20, 0xc3, 0x28, 0xa0, 0xa1])]]],
    ['very long key', [['Authorization', `Bearer mg-${'A'.repeat(8000)}`]]],
    ['invalid then valid', [['Authorization', 'Bearer mg-nope'], auth]],
    ['1000 headers', Array.from({ length: 1000 }, (_, i): Header => [`X-F${i}`, String(i)])],
    ['unicode x-api-key', [['x-api-key', Buffer.from('mg-ключ-🔑', 'utf8')]]],
  ];

  for (const [pattern, methods] of paths) {
    const target = fillParams(pattern);
    const anyMethod = [...methods].find((m) => m !== 'HEAD')!;
    const hasAuth = routes.some((r) => r.url === pattern && r.auth);
    const isPost = methods.has('POST');
    const method = isPost ? 'POST' : anyMethod;

    // Path tricks: none of these is the route, so each is a 4xx.
    const tricks: string[] = [
      `${target}/..`,
      `${target}/../..${target}`,
      target.replace(/^\/v1\//, '/v1/../v1/'),
      target.replace(/^\/v1\//, '/v1/%2e%2e/v1/'),
      target.replace(/^\/v1\//, '/v1%2F'),
      `${target}%00`,
      `${target}%2F`,
      `${target}%2f..%2f..%2fetc%2fpasswd`,
      `/${target}`,
      `${target}/`,
      target.toUpperCase(),
      `${target};x=1`,
      `${target}/${'a'.repeat(300)}`,
      `${target}%`,
      `${target}%E0%A4%A`,
    ];
    for (const t of new Set(tricks)) if (t !== target) add('path trick', method, t, [auth, json], method === 'POST' ? '{}' : undefined);

    // Odd values for every path parameter.
    if (pattern.includes(':')) {
      const odd = ['..', '.', '%2e%2e', '%2F', 'a%2Fb', '%00', 'a%00b', 'x'.repeat(129), 'x'.repeat(257), '%E2%80%AE', '%F0%9F%94%91', ' ', '%20', '%ZZ', 'a..b', '-', '_', key, `task-${key}`, 'cgt-2025%0D%0AX-Injected:1', "'or'1'='1", '<script>', '{{7*7}}'];
      for (const v of odd) add(`param ${v.slice(0, 20)}`, anyMethod, fillParams(pattern, v), [auth]);
    }

    // Wrong methods: 405.
    for (const wrong of ['PUT', 'DELETE', 'PATCH', 'OPTIONS', 'POST', 'GET'].filter((m) => !methods.has(m))) {
      add('wrong method', wrong, target, [auth, json], wrong === 'GET' || wrong === 'OPTIONS' ? undefined : '{}');
    }

    if (hasAuth) {
      for (const [name, headers] of badAuth) add(`auth: ${name}`, method, target, [...headers, json], method === 'POST' ? '{}' : undefined);
      add('bad query, no key', method, `${target}?%ZZ=1&a[b][c]=${'x'.repeat(4000)}`, [], method === 'POST' ? '{}' : undefined);
    }

    // HTTP-level garbage on this path.
    add('oversized header', method, target, [auth, ['X-Pad', 'p'.repeat(20_000)]]);
    add('header injection', method, target, [auth, ['X-A', 'a\rb']]);
    addRaw('space in header name', method, target, Buffer.from(`${method} ${target} HTTP/1.1\r\nHost: a\r\nBad Name: x\r\nConnection: close\r\n\r\n`));
    addRaw('unknown method', 'FOO', target, Buffer.from(`FOO ${target} HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n`));
    addRaw('lf only', method, target, Buffer.from(`${method} ${target} HTTP/1.1\nHost: a\nConnection: close\n\n`), false);
    add('negative length', method, target, [auth, json, ['Content-Length', '-1']]);
    add('length and chunked', method, target, [auth, json, ['Content-Length', '2'], ['Transfer-Encoding', 'chunked']], '0\r\n\r\n');
    add('gzip transfer coding', method, target, [auth, json, ['Transfer-Encoding', 'gzip']], '{}');

    if (!isPost) continue;
    const model = modelFor(pattern);
    const bodies: Array<[string, string | Buffer, Header[]?]> = [
      ['broken json 1', '{'],
      ['broken json 2', `{"model":"${model}",`],
      ['trailing comma', `{"model":"${model}","a":1,}`],
      ['single quotes', `{'model':'${model}'}`],
      ['bad escape', `{"model":"\\u12"}`],
      ['NaN', 'NaN'],
      ['bare word', 'nul'],
      ['array body', '[]'],
      ['number body', '1'],
      ['string body', '"hello"'],
      ['null body', 'null'],
      ['true body', 'true'],
      ['array of requests', JSON.stringify([{ model }])],
      ['empty body', ''],
      ['empty object', '{}'],
      ['model number', '{"model":123}'],
      ['model object', '{"model":{"id":"x"}}'],
      ['model array', `{"model":["${model}"]}`],
      ['model null', '{"model":null}'],
      ['model huge number', '{"model":1e999}'],
      ['model empty', '{"model":""}'],
      ['model huge string', JSON.stringify({ model: 'm'.repeat(300_000) })],
      ['model is a key', JSON.stringify({ model: otherKey, prompt: otherKey, messages: [{ role: 'user', content: otherKey }] })],
      ['model path', '{"model":"../../etc/passwd"}'],
      ['model NUL', `{"model":"${model}\\u0000"}`],
      ['model lone surrogate', `{"model":"\\ud800"}`],
      ['invalid utf-8', Buffer.concat([Buffer.from('{"model":"'), Buffer.from([0xc3, 0x28, 0xff, 0xfe]), Buffer.from('"}')])],
      ['invalid utf-8 outside strings', Buffer.concat([Buffer.from('{"model":"x",'), Buffer.from([0xff]), Buffer.from('}')])],
      ['nested 65 objects', `{"model":"${model}","messages":${nested(65, '{"a":', '}')},"prompt":${nested(65, '[', ']')}}`],
      ['nested 5000 arrays', `{"model":"${model}","metadata":${nested(5000, '[', ']')}}`],
      ['nested 100000 objects', `{"model":"${model}","metadata":${nested(100_000, '{"a":', '}')}}`],
      ['nested body only', nested(20_000, '[', ']')],
      ['prototype pollution', `{"model":"${model}","__proto__":{"admin":true},"constructor":{"prototype":{"x":1}}}`],
      ['wrong types everywhere', JSON.stringify({ model, messages: 'hi', prompt: { a: 1 }, n: 'two', size: [], stream: 'yes', max_tokens: 'ten', images: 5, duration: 'long' })],
      ['messages not array', JSON.stringify({ model, messages: { role: 'user' }, max_tokens: 10, prompt: 5 })],
      ['messages bad roles', JSON.stringify({ model, messages: [{ role: 5, content: [] }], max_tokens: -1, prompt: [] })],
      ['prompt object', JSON.stringify({ model, prompt: { text: 'a' }, messages: 7, images: { url: 1 } })],
      ['images bad', JSON.stringify({ model, prompt: 3, images: [{ url: 5, role: 'nope' }, 7], image: {}, messages: null })],
      ['numbers out of range', JSON.stringify({ model, n: 1e9, duration: -5, seed: 'x', max_tokens: 1e99, messages: [], prompt: '' })],
      ['over the body limit', JSON.stringify({ model, prompt: 'p'.repeat(BODY_LIMIT_MB * 1024 * 1024 + 10) })],
      ['text/plain', JSON.stringify({ model, prompt: 'hi' }), [['Content-Type', 'text/plain']]],
      ['xml', `<req><model>${model}</model></req>`, [['Content-Type', 'application/xml']]],
      ['no content type', JSON.stringify({ model }), []],
      ['utf-16 json', Buffer.from(JSON.stringify({ model }), 'utf16le'), [['Content-Type', 'application/json; charset=utf-16']]],
      ['form urlencoded', `model=${model}&prompt=hi`, [['Content-Type', 'application/x-www-form-urlencoded']]],
      ['multipart without boundary', 'garbage', [['Content-Type', 'multipart/form-data']]],
      ['multipart garbage', '--zz\r\nContent-Disposition: form-data; name="model"\r\n\r\n', [['Content-Type', 'multipart/form-data; boundary=zz']]],
      ['multipart wrong types', `--zz\r\nContent-Disposition: form-data; name="model"\r\n\r\n\r\n--zz\r\nContent-Disposition: form-data; name="image"; filename="a.png"\r\nContent-Type: image/png\r\n\r\nnot a png\r\n--zz--\r\n`, [['Content-Type', 'multipart/form-data; boundary=zz']]],
      ['length shorter than body', `{"model":"${model}","prompt":"abc"}`, [json, ['Content-Length', '10']]],
      ['bad chunk size', 'zz\r\n{}\r\n0\r\n\r\n', [json, ['Transfer-Encoding', 'chunked']]],
      ['chunked broken json', '5\r\n{"mod\r\n0\r\n\r\n', [json, ['Transfer-Encoding', 'chunked']]],
    ];
    for (const [name, body, headers] of bodies) add(`body: ${name}`, 'POST', target, [auth, ...(headers ?? [json])], body);
  }

  // Random combinations until the run is big enough: a random route, a random mutation of a
  // plausible body, a random odd header.
  const posts = routes.filter((r) => r.method === 'POST');
  const wrongValues: unknown[] = [null, 0, -1, 1.5, 1e308, '', 'x'.repeat(5000), [], [[]], {}, { a: { b: { c: 1 } } }, true, '\u0000', '\ud83d', key.slice(0, 10)];
  const fields = ['model', 'messages', 'prompt', 'n', 'size', 'stream', 'max_tokens', 'images', 'image', 'duration', 'resolution', 'ratio', 'seed', 'metadata', 'response_format', 'system', 'tools'];
  const explicit = cases.length;
  while (cases.length < Math.max(MIN_CASES, explicit + RANDOM_CASES)) {
    if (!posts.length) {
      const r = pick(routes);
      add('random odd param', r.method === 'HEAD' ? 'GET' : r.method, fillParams(r.url, encodeURIComponent(String(random()).slice(2)) + '%2F..'), [auth]);
      continue;
    }
    const r = pick(posts);
    const model = modelFor(r.url);
    const body: Record<string, unknown> = { model, prompt: 'a cat', messages: [{ role: 'user', content: 'hi' }], max_tokens: 16 };
    // Break a few fields at random, then a required one for sure.
    for (let i = Math.floor(random() * 4); i > 0; i--) body[pick(fields)] = pick(wrongValues);
    if (random() < 0.3) body.model = pick(wrongValues);
    const core = r.url.includes('chat') || r.url.includes('messages') ? 'messages' : 'prompt';
    body[core] = pick([null, 5, {}, [[1]], true]);
    const headers: Header[] = [auth, json];
    if (random() < 0.3) headers.push([pick(['X-Forwarded-For', 'Accept', 'Accept-Encoding', 'User-Agent', 'Cookie', 'Range']), pick(['\u00ff\u00fe', '*/*;q=abc', 'x'.repeat(2000), 'bytes=0-1,2-3,-5', ''])]);
    add(`random body ${cases.length}`, 'POST', fillParams(r.url), headers, JSON.stringify(body));
  }
  return cases;
}

describe('bad input', () => {
  let gw: TestGateway;
  let port: number;
  let key: string;
  let otherKey: string;

  beforeAll(async () => {
    gw = await startGateway({ server: { host: '127.0.0.1', port: 0, body_limit_mb: BODY_LIMIT_MB } });
    key = (await gw.createKey()).key;
    otherKey = (await gw.createKey({ name: 'other' })).key;
    port = Number(new URL(gw.url).port);
  });
  afterAll(async () => gw?.close());

  it(`answers ${MIN_CASES}+ malformed requests to every route with a 4xx in family shape, leaking no key (seed ${SEED})`, async () => {
    const routes = gw.app.routeTable.routes();
    expect(routes.length).toBeGreaterThanOrEqual(4);
    const cases = generateCases(routes, key, otherKey, seededRandom(SEED));
    expect(cases.length).toBeGreaterThanOrEqual(500);

    const problems: string[] = [];
    const statuses = new Map<number, number>();
    let next = 0;
    const worker = async () => {
      while (next < cases.length) {
        const c = cases[next++];
        const res: RawResponse = await rawRequest(port, c.bytes);
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        const problem = check(c, res, [key, otherKey]);
        if (problem) problems.push(`${c.name}: ${problem}`);
      }
    };
    await Promise.all(Array.from({ length: 6 }, worker));

    // Still serving, and nothing leaked into the logs either.
    expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
    const logs = gw.logs.join('');
    for (const k of [key, otherKey]) expect(logs).not.toContain(k.slice(3, 23));

    if (process.env.FUZZ_REPORT) {
      process.stdout.write(`routes: ${routes.map((r) => `${r.method} ${r.url}`).join(', ')}\ncases: ${cases.length}; statuses: ${JSON.stringify([...statuses])}\n`);
    }
    expect(problems.slice(0, 40), `seed ${SEED}; statuses ${JSON.stringify([...statuses])}`).toEqual([]);
    expect([...statuses.keys()].every((s) => s >= 200 && s < 500)).toBe(true);
  }, 120_000);
});

function check(c: Case, res: RawResponse, keys: string[]): string | null {
  const raw = res.raw.toString('latin1');
  for (const k of keys) if (raw.includes(k.slice(3, 23))) return 'a key appears in the answer';
  if (res.status === 0) return 'no HTTP answer (connection dropped or timed out)';
  if (res.status >= 500) return `status ${res.status}: ${res.body.slice(0, 200)}`;
  if (c.strict && res.status < 400) return `status ${res.status} for a malformed request: ${res.body.slice(0, 200)}`;
  if (res.status < 400 || c.method === 'HEAD') return null;
  if (!/^application\/json/.test(res.headers['content-type'] ?? '')) return `status ${res.status} with content-type ${res.headers['content-type']}: ${res.body.slice(0, 120)}`;
  let body: unknown;
  try {
    body = JSON.parse(res.body);
  } catch {
    return `status ${res.status} with a body that is not JSON: ${res.body.slice(0, 120)}`;
  }
  const problem = errorShapeProblem(familyOf(c.target), body);
  return problem ? `status ${res.status}, ${problem}: ${res.body.slice(0, 160)}` : null;
}
