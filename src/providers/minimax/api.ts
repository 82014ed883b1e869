import type { Dispatcher } from 'undici';
import type { Target } from '../../upstream/target.js';
import { UpstreamFailure } from '../../upstream/failure.js';
import { retryAfterSeconds } from '../../upstream/status-failure.js';
import { readText } from '../../upstream/json.js';

// MiniMax: base_url is the origin (https://api.minimax.io international, https://api.minimaxi.com
// mainland); paths start with /v1; Bearer auth. Errors come in `base_resp` ({status_code,
// status_msg}), usually with HTTP 200: 1002 rate limit, 1004 / 2049 bad key, 1008 balance,
// 1026 / 1027 sensitive input / output, 2013 invalid parameters, 1000 / 1013 server errors.

export function minimaxUrl(target: Target, path: string): string {
  return `${target.baseUrl}/v1${path}`;
}

export function minimaxHeaders(target: Target): Record<string, string> {
  return { authorization: `Bearer ${target.apiKey}`, 'content-type': 'application/json', accept: 'application/json' };
}

/** The HTTP status a base_resp code stands for, so retries and breakers treat it like one. */
function statusOf(code: number): number {
  if (code === 1002 || code === 1039) return 429;
  if (code === 1004 || code === 2049) return 401;
  if (code === 1008) return 402;
  if (code === 1001) return 504;
  if (code === 1000 || code === 1013) return 502;
  return 400;
}

/** A non-zero base_resp as an UpstreamFailure (`httpStatus` when the answer itself was an error status). */
export function baseRespFailure(baseResp: { status_code?: unknown; status_msg?: unknown }, httpStatus = 200, retryAfterS = 0): UpstreamFailure {
  const code = Number(baseResp.status_code);
  const message = typeof baseResp.status_msg === 'string' && baseResp.status_msg ? baseResp.status_msg : `MiniMax answered status_code ${String(baseResp.status_code)}`;
  return new UpstreamFailure('status', message, httpStatus >= 400 ? httpStatus : statusOf(code), String(baseResp.status_code ?? ''), retryAfterS);
}

export async function minimaxFailure(res: Dispatcher.ResponseData): Promise<UpstreamFailure> {
  const text = await readText(res).catch(() => '');
  let base: Record<string, unknown> = {};
  try {
    base = (JSON.parse(text) as { base_resp?: Record<string, unknown> }).base_resp ?? {};
  } catch {
    base = {};
  }
  return baseRespFailure({ status_code: base.status_code ?? res.statusCode, status_msg: base.status_msg ?? `HTTP ${res.statusCode}` }, res.statusCode, retryAfterSeconds(res.headers));
}
