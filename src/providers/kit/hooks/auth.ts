import { createHash, createHmac, createSign } from 'node:crypto';
import { UpstreamFailure } from '../../../upstream/failure.js';
import { readJsonBody } from '../../../upstream/json.js';
import type { Target } from '../../../upstream/target.js';
import type { VideoCall } from '../../video-types.js';
import type { AuthSpec } from '../manifest.js';

// The auth schemes a manifest names (`api.auth.scheme`). Each puts the channel's credentials on
// one outgoing request: a header, a query parameter, a token signed per request, a signature over
// the whole request, or an OAuth token exchanged for a service-account key.

export interface OutgoingRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
}

export type Authorize = (target: Target, req: OutgoingRequest, call: VideoCall) => Promise<OutgoingRequest>;

const b64json = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

/** An HS256 JWT: `iss` = the access key, valid from `skewS` ago for `lifetimeS` (Kling's scheme). */
export function hs256Jwt(accessKey: string, secretKey: string, nowS = Math.floor(Date.now() / 1000), lifetimeS = 1800, skewS = 5): string {
  const unsigned = `${b64json({ alg: 'HS256', typ: 'JWT' })}.${b64json({ iss: accessKey, exp: nowS + lifetimeS, nbf: nowS - skewS })}`;
  return `${unsigned}.${createHmac('sha256', secretKey).update(unsigned).digest('base64url')}`;
}

const sha256hex = (v: string | Buffer) => createHash('sha256').update(v).digest('hex');
const hmac = (key: string | Buffer, v: string) => createHmac('sha256', key).update(v).digest();
const rfc3986 = (v: string) => encodeURIComponent(v).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

export interface V4Options {
  vendor: 'aws' | 'volc';
  accessKey: string;
  secretKey: string;
  region: string;
  service: string;
  /** yyyymmddThhmmssZ */
  date: string;
}

const V4 = {
  aws: { algorithm: 'AWS4-HMAC-SHA256', dateHeader: 'x-amz-date', keyPrefix: 'AWS4', terminator: 'aws4_request' },
  volc: { algorithm: 'HMAC-SHA256', dateHeader: 'x-date', keyPrefix: '', terminator: 'request' },
};

/**
 * Signs a request the Signature Version 4 way (AWS, and Volcengine's variant with its own
 * algorithm name, date header and key derivation): a canonical request over method, path, sorted
 * query, the signed headers and the body's hash; a signing key derived from the secret by date,
 * region and service. Adds the date and Authorization headers.
 */
export function signV4(req: OutgoingRequest, o: V4Options): OutgoingRequest {
  const v = V4[o.vendor];
  const url = new URL(req.url);
  const headers: Record<string, string> = { ...req.headers, [v.dateHeader]: o.date };
  if (o.vendor === 'volc') headers['x-content-sha256'] = sha256hex(req.body ?? '');
  const signed: Record<string, string> = { host: url.host };
  for (const [k, val] of Object.entries(headers)) signed[k.toLowerCase()] = String(val).trim().replace(/\s+/g, ' ');
  const names = Object.keys(signed).sort();
  const query = [...url.searchParams].map(([k, val]) => [rfc3986(k), rfc3986(val)]).sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0));
  const canonical = [req.method.toUpperCase(), url.pathname || '/', query.map(([k, val]) => `${k}=${val}`).join('&'), names.map((n) => `${n}:${signed[n]}\n`).join(''), names.join(';'), sha256hex(req.body ?? '')].join('\n');
  const day = o.date.slice(0, 8);
  const scope = `${day}/${o.region}/${o.service}/${v.terminator}`;
  const toSign = [v.algorithm, o.date, scope, sha256hex(canonical)].join('\n');
  const key = hmac(hmac(hmac(hmac(`${v.keyPrefix}${o.secretKey}`, day), o.region), o.service), v.terminator);
  const signature = createHmac('sha256', key).update(toSign).digest('hex');
  headers.authorization = `${v.algorithm} Credential=${o.accessKey}/${scope}, SignedHeaders=${names.join(';')}, Signature=${signature}`;
  return { ...req, headers };
}

const stamp = (d = new Date()) => d.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');

interface ServiceAccount {
  client_email: string;
  private_key: string;
  token_uri: string;
}

/** Reads a Google service-account key (the JSON file's text, kept as the channel's api_key). */
export function serviceAccount(json: string): ServiceAccount {
  let sa: Partial<ServiceAccount> = {};
  try {
    sa = JSON.parse(json) as Partial<ServiceAccount>;
  } catch {
    sa = {};
  }
  if (typeof sa.client_email !== 'string' || typeof sa.private_key !== 'string') throw new UpstreamFailure('status', 'the channel api_key is not a Google service-account key (JSON with client_email and private_key)', 401, 'bad_credentials');
  return { client_email: sa.client_email, private_key: sa.private_key, token_uri: typeof sa.token_uri === 'string' ? sa.token_uri : 'https://oauth2.googleapis.com/token' };
}

/** The RS256 assertion a service account trades for an access token (OAuth 2.0 JWT bearer grant). */
export function serviceAccountAssertion(sa: ServiceAccount, scope: string, nowS = Math.floor(Date.now() / 1000)): string {
  const unsigned = `${b64json({ alg: 'RS256', typ: 'JWT' })}.${b64json({ iss: sa.client_email, scope, aud: sa.token_uri, iat: nowS, exp: nowS + 3600 })}`;
  return `${unsigned}.${createSign('RSA-SHA256').update(unsigned).sign(sa.private_key, 'base64url')}`;
}

/** Access tokens by service account and scope, reused until a minute before they expire. */
const tokens = new Map<string, { token: string; expiresAt: number }>();

async function googleToken(target: Target, scope: string, call: VideoCall): Promise<string> {
  const sa = serviceAccount(target.apiKey);
  const cacheKey = `${sa.client_email}\n${sa.token_uri}\n${scope}`;
  const cached = tokens.get(cacheKey);
  if (cached && cached.expiresAt > Date.now() + 60_000) return cached.token;
  const body = new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: serviceAccountAssertion(sa, scope) }).toString();
  const res = await call.upstream.send({ url: sa.token_uri, method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }, body, signal: call.signal });
  const json = (await readJsonBody(res, call.signal).catch(() => null)) as { access_token?: unknown; expires_in?: unknown } | null;
  if (res.statusCode !== 200 || typeof json?.access_token !== 'string') throw new UpstreamFailure('status', `the OAuth token endpoint refused the service account (HTTP ${res.statusCode})`, res.statusCode >= 400 ? res.statusCode : 502, 'oauth_token');
  const lifetimeS = typeof json.expires_in === 'number' && json.expires_in > 0 ? json.expires_in : 3600;
  tokens.set(cacheKey, { token: json.access_token, expiresAt: Date.now() + lifetimeS * 1000 });
  return json.access_token;
}

const withHeader = (req: OutgoingRequest, name: string, value: string): OutgoingRequest => ({ ...req, headers: { ...req.headers, [name]: value } });

/** The scheme a manifest names, bound to its settings. */
export function authorizer(spec: AuthSpec): Authorize {
  switch (spec.scheme) {
    case 'bearer':
      return async (t, req) => withHeader(req, 'authorization', `Bearer ${t.apiKey}`);
    case 'header':
      return async (t, req) => withHeader(req, (spec.name ?? 'authorization').toLowerCase(), (spec.value ?? '{key}').replace('{key}', t.apiKey));
    case 'query':
      return async (t, req) => {
        const url = new URL(req.url);
        url.searchParams.set(spec.name ?? 'key', t.apiKey);
        return { ...req, url: url.toString() };
      };
    case 'jwt-hs256':
      return async (t, req) => withHeader(req, 'authorization', `Bearer ${hs256Jwt(t.apiKey, t.apiSecret, undefined, spec.lifetime_s, spec.skew_s)}`);
    case 'hmac-v4':
      return async (t, req) => signV4(req, { vendor: spec.vendor ?? 'aws', accessKey: t.apiKey, secretKey: t.apiSecret, region: spec.region ?? 'us-east-1', service: spec.service ?? '', date: stamp() });
    case 'google-service-account':
      return async (t, req, call) => withHeader(req, 'authorization', `Bearer ${await googleToken(t, spec.scope ?? 'https://www.googleapis.com/auth/cloud-platform', call)}`);
  }
}

/** Schemes that sign with a second credential (the channel's api_secret). */
export function needsSecret(spec: AuthSpec): boolean {
  return spec.scheme === 'jwt-hs256' || spec.scheme === 'hmac-v4';
}
