import { randomUUID } from 'node:crypto';
import type { Dispatcher } from 'undici';
import { readJsonBody } from '../../upstream/json.js';
import { UpstreamFailure } from '../../upstream/failure.js';
import { statusFailure } from '../../upstream/status-failure.js';
import type { Target } from '../../upstream/target.js';
import { jsonCall, type ImageBytes } from '../video-support.js';
import type { VideoCall } from '../video-types.js';
import { authorizer, type Authorize, type OutgoingRequest } from './hooks/auth.js';
import type { Manifest } from './manifest.js';
import { interpolate } from './template.js';
import { absent, at, firstText, text } from './values.js';

// One JSON call to a manifest's provider: its address, headers and auth scheme; its error body
// read for the message and code; a 2xx answer whose envelope says failure is a failure too.

export interface KitRequest {
  method: string;
  path: string;
  /** The whole address instead of base URL + base path + path (a read at the origin, with a query). */
  url?: string;
  headers?: Record<string, string>;
  body?: unknown;
}

/** The channel's settings with the manifest's defaults under them. */
export function settingsOf(m: Manifest, target: Target): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, spec] of Object.entries(m.api.settings ?? {})) if (spec.default !== undefined) out[k] = spec.default;
  return { ...out, ...target.settings };
}

export class KitHttp {
  readonly authorize: Authorize;

  constructor(private readonly m: Manifest) {
    this.authorize = authorizer(m.api.auth);
  }

  url(target: Target, path: string): string {
    const base = this.m.api.base_path ?? '';
    const values = settingsOf(this.m, target);
    const prefix = base.includes('{') ? interpolate(base, (n) => (n.startsWith('settings.') ? values[n.slice(9)] : undefined), (v) => encodeURIComponent(v)) : base;
    if (prefix === undefined) throw new UpstreamFailure('status', `the channel lacks a setting its ${this.m.name} paths need (${base})`, 400, 'channel_settings');
    return `${target.baseUrl}${prefix}${path}`;
  }

  /** The request with the channel's credentials on it. */
  signed(call: VideoCall, target: Target, r: KitRequest): Promise<OutgoingRequest> {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    // `{uuid}` in a header value: a new UUID on every request (Pixverse's Ai-trace-id).
    for (const [k, v] of Object.entries({ ...this.m.api.headers, ...r.headers })) headers[k.toLowerCase()] = v.replaceAll('{uuid}', () => randomUUID());
    return this.authorize(target, { method: r.method, url: r.url ?? this.url(target, r.path), headers, body: r.body === undefined ? undefined : JSON.stringify(r.body) }, call);
  }

  failure = (res: Dispatcher.ResponseData): Promise<UpstreamFailure> => {
    const e = this.m.api.errors ?? {};
    return statusFailure(res, (b: unknown) => ({ message: firstText(b, e.message), code: firstText(b, e.code) }));
  };

  /** `taskRead`: the read of one task, whose envelope is checked only when the manifest says so. */
  async call(call: VideoCall, target: Target, r: KitRequest, taskRead = false): Promise<Record<string, unknown>> {
    return this.unwrapped(await this.raw(call, target, r, taskRead));
  }

  /** Hook: image upload. One image as a multipart/form-data file field; the answer read as any (envelope, unwrap). */
  async upload(call: VideoCall, target: Target, path: string, field: string, image: ImageBytes, name: string): Promise<Record<string, unknown>> {
    const boundary = `----mediagate${randomUUID().replaceAll('-', '')}`;
    const ext = image.mimeType.split('/')[1] ?? 'png';
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="${name}.${ext}"\r\nContent-Type: ${image.mimeType}\r\n\r\n`;
    const body = Buffer.concat([Buffer.from(head), Buffer.from(image.base64, 'base64'), Buffer.from(`\r\n--${boundary}--\r\n`)]);
    const s = await this.signed(call, target, { method: 'POST', path });
    const res = await call.upstream.send({ url: s.url, method: 'POST', headers: { ...s.headers, 'content-type': `multipart/form-data; boundary=${boundary}` }, body, signal: call.signal, traceparent: call.traceparent, tracestate: call.tracestate });
    if (res.statusCode < 200 || res.statusCode >= 300) throw await this.failure(res);
    const out = await readJsonBody(res, call.signal);
    if (!out || typeof out !== 'object' || Array.isArray(out)) throw new UpstreamFailure('malformed', 'the upstream answered with a JSON value that is not an object', res.statusCode);
    this.checkEnvelope(out as Record<string, unknown>);
    return this.unwrapped(out as Record<string, unknown>);
  }

  private unwrapped(out: Record<string, unknown>): Record<string, unknown> {
    const unwrap = this.m.api.unwrap;
    if (!unwrap) return out;
    const inner = at(out, unwrap);
    return inner && typeof inner === 'object' && !Array.isArray(inner) ? (inner as Record<string, unknown>) : {};
  }

  /** The answer as sent (envelope checked, not unwrapped). */
  async raw(call: VideoCall, target: Target, r: KitRequest, taskRead = false): Promise<Record<string, unknown>> {
    const s = await this.signed(call, target, r);
    const out = await jsonCall(call, { url: s.url, method: r.method as Dispatcher.HttpMethod, headers: s.headers, body: r.body }, this.failure);
    if (!taskRead || this.m.api.envelope?.task_reads !== false) this.checkEnvelope(out);
    return out;
  }

  checkEnvelope(out: Record<string, unknown>): void {
    const env = this.m.api.envelope;
    if (!env || (env.unless && text(at(out, env.unless)))) return;
    const code = at(out, env.code);
    if (absent(code) ? env.missing_ok : env.ok.some((ok) => String(ok) === String(code))) return;
    const field = env.code.split('.').pop();
    const message = (env.message ? text(at(out, env.message)) : '') || `${this.m.name} answered ${field} ${String(code)}`;
    throw new UpstreamFailure('status', message, env.status_by_code?.[String(code)] ?? env.status ?? 502, text(code));
  }
}
