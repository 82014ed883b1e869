import { createHmac } from 'node:crypto';
import type { Dispatcher } from 'undici';
import type { Target } from '../../upstream/target.js';
import { statusFailure } from '../../upstream/status-failure.js';
import type { UpstreamFailure } from '../../upstream/failure.js';

// Kling: base_url is the origin (https://api-singapore.klingai.com); paths start with /v1. Every
// request carries `Authorization: Bearer <JWT>`, a token signed here per request (HS256) with the
// channel's secret key (`api_secret`), `iss` = its access key (`api_key`), valid from 5 s ago for
// 30 minutes. Errors are {code, message, request_id} with codes such as 1000–1004 (auth), 1102
// (balance), 1301 (content safety), 1302/1303 (rate, concurrency).

const TOKEN_LIFETIME_S = 1800;
const CLOCK_SKEW_S = 5;

const b64url = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

/** An HS256 JWT for Kling, signed with the secret key. */
export function klingToken(accessKey: string, secretKey: string, nowS = Math.floor(Date.now() / 1000)): string {
  const unsigned = `${b64url({ alg: 'HS256', typ: 'JWT' })}.${b64url({ iss: accessKey, exp: nowS + TOKEN_LIFETIME_S, nbf: nowS - CLOCK_SKEW_S })}`;
  return `${unsigned}.${createHmac('sha256', secretKey).update(unsigned).digest('base64url')}`;
}

export function klingUrl(target: Target, path: string): string {
  return `${target.baseUrl}/v1${path}`;
}

export function klingHeaders(target: Target): Record<string, string> {
  return { authorization: `Bearer ${klingToken(target.apiKey, target.apiSecret)}`, 'content-type': 'application/json', accept: 'application/json' };
}

export function klingFailure(res: Dispatcher.ResponseData): Promise<UpstreamFailure> {
  return statusFailure(res, (b: { code?: number; message?: string }) => ({ message: b.message, code: b.code === undefined ? undefined : String(b.code) }));
}
