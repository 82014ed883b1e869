import type { Dispatcher } from 'undici';
import { errors } from '../http/errors.js';
import { allowsPrivateNetwork, FetchRefused, guardedGet } from '../upstream/address-guard.js';
import { SIMULATOR_IMAGE_FILES } from './simulator/wire.js';
import { UpstreamFailure } from '../upstream/failure.js';
import { readJsonBody } from '../upstream/json.js';
import type { Target } from '../upstream/target.js';
import type { BillableUnits, VideoCall, VideoGenerationRequest, VideoParams } from './video-types.js';

// Small pieces the per-second video providers (Veo, Kling, Wan, Hailuo) share: refusing the
// generation parameters a provider has no field for, the per-second estimate, one JSON call, and
// turning a client's image reference into bytes or base64 when a provider wants no URLs.

/** 400 naming the parameters the provider takes, when the request sets any other. */
export function refuseParams(req: VideoGenerationRequest, provider: string, supported: readonly (keyof VideoParams)[]): void {
  const extra = (Object.keys(req.params) as (keyof VideoParams)[]).filter((k) => req.params[k] !== undefined && !supported.includes(k));
  if (extra.length === 0) return;
  throw errors.invalidRequest(`${extra.join(', ')} ${extra.length > 1 ? 'are' : 'is'} not supported by ${provider}; it takes ${supported.length ? supported.join(', ') : 'no generation parameters'} (others go in metadata).`, String(extra[0]));
}

/** 400 when metadata tries to set a field the gateway builds itself. */
export function refuseReserved(req: VideoGenerationRequest, reserved: readonly string[]): void {
  const hit = reserved.find((k) => k in req.metadata);
  if (hit) throw errors.invalidRequest(`metadata.${hit} is set by the gateway and cannot be passed through.`, 'metadata');
}

/** The credit hold of a per-second provider: the requested (or default) seconds at the requested (or default) resolution. */
export function secondsEstimate(req: VideoGenerationRequest, defaults: { duration: number; resolution: string }): BillableUnits {
  return { unit: 'seconds', units: req.params.duration ?? defaults.duration, resolution: req.params.resolution ?? defaults.resolution };
}

/**
 * One JSON call to a provider: a non-2xx answer becomes the provider's failure (`failure` reads
 * its error body), a 2xx answer must be a JSON object (204 No Content stands for an empty one).
 */
export async function jsonCall(
  call: VideoCall,
  opts: { url: string; method: Dispatcher.HttpMethod; headers: Record<string, string>; body?: unknown },
  failure: (res: Dispatcher.ResponseData) => Promise<UpstreamFailure>,
): Promise<Record<string, unknown>> {
  const res = await call.upstream.send({ url: opts.url, method: opts.method, headers: opts.headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body), signal: call.signal, traceparent: call.traceparent, tracestate: call.tracestate });
  if (res.statusCode < 200 || res.statusCode >= 300) throw await failure(res);
  // 204 No Content (Runway's cancel): an answer without a body.
  if (res.statusCode === 204) {
    await res.body.dump();
    return {};
  }
  const json = await readJsonBody(res, call.signal);
  if (!json || typeof json !== 'object' || Array.isArray(json)) throw new UpstreamFailure('malformed', 'the upstream answered with a JSON value that is not an object', res.statusCode);
  return json as Record<string, unknown>;
}

const MAX_REDIRECTS = 3;

/** Whether two URLs share scheme, host and port. */
export function sameOrigin(a: string, b: string): boolean {
  try {
    return new URL(a).origin === new URL(b).origin;
  } catch {
    return false;
  }
}

/**
 * GETs a result video, following the redirects storage hosts answer with (a few hops). The
 * headers are chosen per hop, so a credential goes only where it belongs. Every hop outside the
 * channel's own base_url origin (the operator's choice, like its API calls) goes through the
 * address guard — the private-network verdict of result URLs: a provider cannot point the gateway
 * at its own network unless the channel allows it (`allow_private_network`).
 */
export async function getFollowingRedirects(call: VideoCall, target: Target, url: string, headersFor: (url: string) => Record<string, string>): Promise<Dispatcher.ResponseData> {
  const anyAddress = allowsPrivateNetwork(target.channel);
  for (let hop = 0; ; hop++) {
    const publicOnly = !anyAddress && !sameOrigin(url, target.baseUrl);
    const res = await call.upstream.send({ url, method: 'GET', headers: headersFor(url), signal: call.signal, publicOnly, traceparent: call.traceparent, tracestate: call.tracestate });
    const location = res.headers.location;
    if (res.statusCode < 300 || res.statusCode >= 400 || !location || hop >= MAX_REDIRECTS) return res;
    res.body.on('error', () => undefined);
    res.body.destroy();
    url = new URL(String(location), url).toString();
  }
}

const DATA_URL = /^data:(image\/[a-z0-9.+-]+);base64,([A-Za-z0-9+/]+={0,2})$/i;
/** Largest image fetched for a provider that takes bytes. */
export const MAX_IMAGE_BYTES = 20 * 1024 * 1024;
const IMAGE_FETCH_TIMEOUT_MS = 15_000;

export interface ImageBytes {
  mimeType: string;
  base64: string;
}

/**
 * Whether a client's image URL is one of the simulator's own image files on this channel (its
 * origin, its files path): the only URL a client may point at a non-public address. The channel's
 * `allow_private_network` is about URLs its provider hands the gateway, never a client's.
 */
function isSimulatorImageFile(target: Target, url: URL): boolean {
  return target.channel.type === 'simulator' && sameOrigin(url.href, target.baseUrl) && url.pathname.startsWith(SIMULATOR_IMAGE_FILES);
}

/**
 * The bytes of a client's image, for providers that take base64 only: a `data:` URL is decoded,
 * an http(s) URL is fetched through the guarded fetcher (public addresses only on every channel,
 * image content types, size cap, timeout). A fetch that fails is the client's 400, naming which
 * image; a refused host reads the same whatever listens there.
 */
export async function imageBytes(target: Target, url: string, where: string, signal?: AbortSignal): Promise<ImageBytes> {
  const inline = DATA_URL.exec(url);
  if (inline) return { mimeType: inline[1].toLowerCase(), base64: inline[2] };
  try {
    const got = await guardedGet(url, { allowTypes: ['image/'], maxBytes: MAX_IMAGE_BYTES, timeoutMs: IMAGE_FETCH_TIMEOUT_MS, exempt: (u) => isSimulatorImageFile(target, u), signal });
    return { mimeType: got.contentType, base64: got.body.toString('base64') };
  } catch (err) {
    if (err instanceof FetchRefused) throw errors.invalidRequest(`${where} could not be fetched: ${err.message}.`, where);
    throw err;
  }
}

/** A `data:` URL's payload as raw base64 (providers that take base64 without the prefix), other URLs as they are. */
export function urlOrRawBase64(url: string): string {
  return DATA_URL.exec(url)?.[2] ?? url;
}

export const obj = (v: unknown) => (v && typeof v === 'object' && !Array.isArray(v) ? v : {}) as Record<string, unknown>;
export const str = (v: unknown) => (typeof v === 'string' ? v : '');
