import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createVerify, generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authorizer, hs256Jwt, signV4 } from '../../src/providers/kit/hooks/auth.js';
import { UpstreamClient } from '../../src/upstream/client.js';
import type { Target } from '../../src/upstream/target.js';

// The provider kit's auth schemes, each on its own: the signed token and signatures against
// vectors computed outside this code (AWS's documented Signature V4 example, an HS256 JWT and a
// Volcengine signature computed with Python's hmac), and the service-account OAuth exchange
// against a token endpoint that checks the assertion with the public key.

const target = (over: Partial<Target> = {}): Target => ({ channel: { name: 'c', type: 'x' }, baseUrl: 'https://api.example.com', apiKey: 'key-1', apiSecret: 'secret-1', upstreamModel: 'm', ...over }) as Target;
const req = { method: 'POST', url: 'https://api.example.com/v1/tasks?a=1', headers: { 'content-type': 'application/json' }, body: '{}' };
const upstream = new UpstreamClient({ connectMs: 2000, firstByteMs: 5000, idleMs: 5000 });
const call = { upstream };
afterAll(() => upstream.close());

describe('kit auth: header schemes', () => {
  it('bearer, a named header with a value template, and a query parameter', async () => {
    expect((await authorizer({ scheme: 'bearer' })(target(), req, call)).headers.authorization).toBe('Bearer key-1');
    expect((await authorizer({ scheme: 'header', name: 'X-Goog-Api-Key' })(target(), req, call)).headers['x-goog-api-key']).toBe('key-1');
    expect((await authorizer({ scheme: 'header', name: 'Authorization', value: 'Token {key}' })(target(), req, call)).headers.authorization).toBe('Token key-1');
    const q = await authorizer({ scheme: 'query', name: 'key' })(target(), req, call);
    expect(new URL(q.url).searchParams.get('key')).toBe('key-1');
    expect(new URL(q.url).searchParams.get('a')).toBe('1');
  });
});

describe('kit auth: jwt-hs256', () => {
  it('matches a token computed independently (HS256 over the compact JSON header and claims)', () => {
    expect(hs256Jwt('ak-test', 'sk-test-secret', 1_700_000_000, 1800, 5)).toBe(
      'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJhay10ZXN0IiwiZXhwIjoxNzAwMDAxODAwLCJuYmYiOjE2OTk5OTk5OTV9.M4nfRl5ZIQrZbQWFOp7VZ36JrMkLjH3W9YDakXgAXSw',
    );
  });

  it('signs with the channel secret, iss = the access key', async () => {
    const out = await authorizer({ scheme: 'jwt-hs256', lifetime_s: 600, skew_s: 0 })(target({ apiKey: 'ak', apiSecret: 'sk' }), req, call);
    const [, claims] = out.headers.authorization.replace('Bearer ', '').split('.');
    const c = JSON.parse(Buffer.from(claims, 'base64url').toString()) as { iss: string; exp: number; nbf: number };
    expect(c.iss).toBe('ak');
    expect(c.exp - c.nbf).toBe(600);
  });
});

describe('kit auth: hmac-v4', () => {
  it('reproduces the AWS Signature Version 4 documented example (IAM ListUsers)', () => {
    const out = signV4(
      { method: 'GET', url: 'https://iam.amazonaws.com/?Action=ListUsers&Version=2010-05-08', headers: { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' } },
      { vendor: 'aws', accessKey: 'AKIDEXAMPLE', secretKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', region: 'us-east-1', service: 'iam', date: '20150830T123600Z' },
    );
    expect(out.headers['x-amz-date']).toBe('20150830T123600Z');
    expect(out.headers.authorization).toBe(
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7',
    );
  });

  it('signs the Volcengine way: HMAC-SHA256, X-Date, X-Content-Sha256, key from the bare secret, "request" scope', () => {
    const body = '{"req_key":"jimeng_vgfm_t2v_l20","prompt":"a corgi"}';
    const out = signV4(
      { method: 'POST', url: 'https://visual.volcengineapi.com/?Action=CVSync2AsyncSubmitTask&Version=2022-08-31', headers: { 'content-type': 'application/json' }, body },
      { vendor: 'volc', accessKey: 'AKLTexample', secretKey: 'c2VjcmV0LWtleS1leGFtcGxl', region: 'cn-north-1', service: 'cv', date: '20250101T120000Z' },
    );
    expect(out.headers['x-content-sha256']).toBe('339d517b621db0c6497fa208bb1cfa72b167e99f527421e07faab71c16c8f14b');
    expect(out.headers.authorization).toBe(
      'HMAC-SHA256 Credential=AKLTexample/20250101/cn-north-1/cv/request, SignedHeaders=content-type;host;x-content-sha256;x-date, Signature=222b32cfd74c955c9664d0913a2014f774591f1956900d5241337bd4aa91bdb9',
    );
  });
});

describe('kit auth: google-service-account', () => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  let server: Server;
  let tokenUri: string;
  let exchanges = 0;
  let lastAssertion: Record<string, unknown> = {};
  beforeAll(async () => {
    server = createServer((rq, rs) => {
      let body = '';
      rq.on('data', (c: Buffer) => (body += c.toString()));
      rq.on('end', () => {
        const form = new URLSearchParams(body);
        const [h, c, sig] = (form.get('assertion') ?? '').split('.');
        const valid = createVerify('RSA-SHA256').update(`${h}.${c}`).verify(publicKey, sig, 'base64url');
        if (!valid || form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') return rs.writeHead(400).end('{"error":"invalid_grant"}');
        exchanges++;
        lastAssertion = JSON.parse(Buffer.from(c, 'base64url').toString()) as Record<string, unknown>;
        rs.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: `ya29.token-${exchanges}`, expires_in: 3600, token_type: 'Bearer' }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    tokenUri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`;
  });
  afterAll(() => new Promise((r) => server.close(r)));

  it('trades a signed assertion for an access token once, then reuses it', async () => {
    const key = JSON.stringify({ client_email: 'sa@proj.iam.gserviceaccount.com', private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }), token_uri: tokenUri });
    const auth = authorizer({ scheme: 'google-service-account', scope: 'https://www.googleapis.com/auth/cloud-platform' });
    const first = await auth(target({ apiKey: key }), req, call);
    const second = await auth(target({ apiKey: key }), req, call);
    expect(first.headers.authorization).toBe('Bearer ya29.token-1');
    expect(second.headers.authorization).toBe('Bearer ya29.token-1');
    expect(exchanges).toBe(1);
    expect(lastAssertion).toMatchObject({ iss: 'sa@proj.iam.gserviceaccount.com', aud: tokenUri, scope: 'https://www.googleapis.com/auth/cloud-platform' });
  });

  it('refuses an api_key that is not a service-account key, without echoing it', async () => {
    const err = (await Promise.resolve(authorizer({ scheme: 'google-service-account' })(target({ apiKey: 'not-json-secret-123' }), req, call)).catch((e: unknown) => e)) as Error;
    expect(err.message).toMatch(/not a Google service-account key/);
    expect(err.message).not.toContain('not-json-secret-123');
  });
});
