import type { ChannelConfig } from '../config/schema.js';
import type { UpstreamClient } from '../upstream/client.js';
import { targetFor } from '../upstream/target.js';
import { redact } from '../http/redact.js';
import type { ProbeResult } from './health.js';
import { providerFor } from '../providers/index.js';

// The probe of a channel taken out of rotation (and of the console's Test button): a request no
// provider bills. Types with a model list read it with the channel's credentials, so a refused key
// shows; a provider whose manifest declares a probe gets that (the read of a task no one created,
// whose documented "not found" means it answered and took the credentials); any other type is asked
// for its base URL without credentials, where any answer below 500 means the provider is reachable.

interface ProbeShape {
  path: string;
  headers: (key: string) => Record<string, string>;
}

const SHAPES: Record<string, ProbeShape> = {
  // base_url ends in /v1 (https://api.openai.com/v1): GET /v1/models.
  openai: { path: '/models', headers: (key) => ({ authorization: `Bearer ${key}` }) },
  simulator: { path: '/v1/models', headers: (key) => ({ authorization: `Bearer ${key}` }) },
  anthropic: { path: '/v1/models', headers: (key) => ({ 'x-api-key': key, 'anthropic-version': '2023-06-01' }) },
  gemini: { path: '/v1beta/models', headers: (key) => ({ 'x-goog-api-key': key }) },
};

/** What the probe of a channel type sends, for the docs and the admin answer. */
export function probeDescription(type: string): string {
  const shape = SHAPES[type];
  if (shape) return `GET ${shape.path} (model list)`;
  return providerFor(type)?.probe?.description ?? 'GET base URL';
}

export async function probeChannel(upstream: UpstreamClient, channel: ChannelConfig, timeoutMs = 10_000): Promise<ProbeResult> {
  const started = performance.now();
  const ms = () => Math.round(performance.now() - started);
  const target = targetFor(channel, channel.models[0] ?? '');
  const shape = SHAPES[channel.type];
  // A provider whose manifest declares its probe (an unknown task's read): what it says it found.
  const declared = shape ? undefined : providerFor(channel.type)?.probe;
  if (declared) {
    try {
      return { ...(await declared.run({ upstream, signal: AbortSignal.timeout(timeoutMs) }, target)), latency_ms: ms() };
    } catch (err) {
      return { ok: false, status: null, message: redact((err as Error).message), latency_ms: ms() };
    }
  }
  try {
    const res = await upstream.send({
      url: `${target.baseUrl}${shape ? shape.path : '/'}`,
      method: 'GET',
      headers: shape ? shape.headers(target.apiKey) : {},
      signal: AbortSignal.timeout(timeoutMs),
    });
    await res.body.dump().catch(() => undefined);
    const status = res.statusCode;
    if (shape) {
      if (status >= 200 && status < 300) return { ok: true, status, message: 'answered', latency_ms: ms() };
      const why = status === 401 || status === 403 ? "the provider refused the channel's credentials" : status === 429 ? 'the provider is rate limiting' : `the provider answered ${status}`;
      return { ok: false, status, message: why, latency_ms: ms() };
    }
    return status < 500 ? { ok: true, status, message: 'reachable', latency_ms: ms() } : { ok: false, status, message: `the provider answered ${status}`, latency_ms: ms() };
  } catch (err) {
    return { ok: false, status: null, message: redact((err as Error).message), latency_ms: ms() };
  }
}
