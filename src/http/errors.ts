import { redact } from './redact.js';

// The gateway's one error type and the error body shapes of docs/errors.md. Routes and hooks
// throw GatewayError; the app's error handler renders it in the family of the request's path.

export type Family = 'openai' | 'anthropic' | 'gemini' | 'video' | 'admin' | 'plain';

export class GatewayError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
    readonly param: string | null = null,
  ) {
    super(message);
    this.name = 'GatewayError';
  }

  /** For the operator's log line only, never the answer: e.g. the upstream channels that failed. */
  logFields?: Record<string, unknown>;
}

export function familyOf(url: string): Family {
  if (url.startsWith('/v1/messages')) return 'anthropic';
  if (url.startsWith('/v1beta/')) return 'gemini';
  if (url.startsWith('/v1/video/')) return 'video';
  if (url.startsWith('/v1/')) return 'openai';
  if (url.startsWith('/admin/') || url === '/admin' || url.startsWith('/console')) return 'admin';
  return 'plain';
}

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});
const ADMIN_HEADERS: Readonly<Record<string, string>> = Object.freeze({ 'cache-control': 'no-store' });

/** Headers every answer of a family carries, errors included: no cache keeps an admin answer. */
export function familyHeaders(family: Family): Readonly<Record<string, string>> {
  return family === 'admin' ? ADMIN_HEADERS : NO_HEADERS;
}

const OPENAI_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'invalid_request_error',
  403: 'permission_error',
  404: 'invalid_request_error',
  405: 'invalid_request_error',
  413: 'invalid_request_error',
  429: 'rate_limit_error',
};

const ANTHROPIC_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  405: 'invalid_request_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  503: 'overloaded_error',
  529: 'overloaded_error',
};

export function openaiErrorType(status: number, code: string): string {
  // A spent budget is a stop for billing reasons, as OpenAI's own quota refusal is.
  if (code === 'insufficient_quota' || code === 'budget_exceeded') return 'insufficient_quota';
  return OPENAI_TYPES[status] ?? (status >= 500 ? 'server_error' : 'invalid_request_error');
}

export function anthropicErrorType(status: number): string {
  return ANTHROPIC_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
}

const GOOGLE_STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  405: 'INVALID_ARGUMENT',
  409: 'ABORTED',
  413: 'INVALID_ARGUMENT',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  501: 'UNIMPLEMENTED',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

/** Google's canonical status name for an HTTP status (Gemini's error bodies carry it). */
export function googleStatus(status: number): string {
  return GOOGLE_STATUS[status] ?? (status >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION');
}

export function errorBody(family: Family, err: GatewayError): unknown {
  const message = redact(err.message);
  switch (family) {
    case 'anthropic':
      return { type: 'error', error: { type: anthropicErrorType(err.status), message } };
    case 'gemini':
      return { error: { code: err.status, message, status: googleStatus(err.status) } };
    case 'video':
      return { code: err.code, message, data: null };
    case 'openai':
      return { error: { message, type: openaiErrorType(err.status, err.code), code: err.code, param: err.param } };
    case 'admin':
      return { error: { code: err.code, message } };
    default:
      return { error: err.code, message };
  }
}

// Shorthands for the status table of docs/errors.md.
export const errors = {
  invalidRequest: (message: string, param: string | null = null) => new GatewayError(400, 'invalid_request', message, {}, param),
  invalidApiKey: (message = 'Invalid API key. Send it as "Authorization: Bearer <key>" or "x-api-key: <key>".') =>
    new GatewayError(401, 'invalid_api_key', message),
  modelNotAllowed: (model: string) => new GatewayError(403, 'model_not_allowed', `This key may not use the model "${model}".`),
  insufficientQuota: () => new GatewayError(403, 'insufficient_quota', 'The credit of this key is exhausted. Ask the operator to top it up.'),
  modelNotFound: (model: string) =>
    new GatewayError(404, 'model_not_found', `The model "${model}" does not exist or has no available channel; GET /v1/models lists the models this key can use.`, {}, 'model'),
  noAvailableChannel: (model: string) => new GatewayError(503, 'no_available_channel', `No healthy upstream channel serves the model "${model}" right now.`),
  upstreamError: (message = 'The upstream provider failed.') => new GatewayError(502, 'upstream_error', message),
  upstreamTimeout: (message = 'The upstream provider did not answer in time.') => new GatewayError(504, 'upstream_timeout', message),
  databaseUnavailable: () =>
    new GatewayError(503, 'database_unavailable', "The gateway's database is not answering right now; retry in a moment.", { 'retry-after': '1' }),
  shuttingDown: () => new GatewayError(503, 'shutting_down', 'This gateway instance is shutting down; retry the request.', { 'retry-after': '1' }),
};

/**
 * The HTTP status an error thrown in a request stands for: a GatewayError's own, the `statusCode`
 * of errors that carry one (a library's, the store's DatabaseUnavailableError), else 500.
 */
export function statusOf(err: unknown): number {
  if (err instanceof GatewayError) return err.status;
  const s = (err as { statusCode?: unknown } | null)?.statusCode;
  return typeof s === 'number' && s >= 400 && s <= 599 ? s : 500;
}
