// The console's one door to the admin API: JSON in and out, the session's CSRF token on every
// state-changing request, errors thrown with the API's message.

let csrf = null;
let sessionEnded = () => undefined;

export function setCsrf(token) {
  csrf = token;
}

/** Called when an admin API call answers 401: the session expired, was logged out elsewhere, or its token was revoked. */
export function onSessionEnded(handler) {
  sessionEnded = handler;
}

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export async function api(method, path, body) {
  const headers = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrf) headers['x-csrf-token'] = csrf;
  const res = await fetch(`/admin/api${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin' });
  const text = await res.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  // Login and the session check answer 401 as part of logging in; anywhere else it means the session is gone.
  if (res.status === 401 && path !== '/session') sessionEnded();
  if (!res.ok) throw new ApiError(res.status, data?.error?.code ?? 'error', data?.error?.message ?? `HTTP ${res.status}`);
  return data;
}

/** A query string from the non-empty fields of an object. */
export function qs(params) {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') p.set(k, String(v));
  const s = p.toString();
  return s ? `?${s}` : '';
}
