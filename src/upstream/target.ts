import type { ChannelConfig } from '../config/schema.js';

/** One channel chosen to serve one model: everything an adapter needs to address the upstream. */
export interface Target {
  channel: ChannelConfig;
  /** The channel's base URL without a trailing slash. */
  baseUrl: string;
  apiKey: string;
  /** The channel's second credential, for providers that sign requests (empty when not set). */
  apiSecret: string;
  /** The model id to send upstream (after the channel's model_map). */
  upstreamModel: string;
  /** The channel's `settings` (provider values beside the credentials, such as a project and region). */
  settings?: Record<string, string>;
  /** The W3C traceparent of this attempt (set by the relay when tracing is on): sent with its upstream request. */
  traceparent?: string;
  /** The W3C tracestate sent beside it (the client's, passed on). */
  tracestate?: string;
}

export function targetFor(channel: ChannelConfig, model: string): Target {
  return {
    channel,
    baseUrl: (channel.base_url ?? '').replace(/\/+$/, ''),
    apiKey: channel.api_key ?? '',
    apiSecret: channel.api_secret ?? '',
    upstreamModel: channel.model_map[model] ?? model,
    settings: channel.settings ?? {},
    // Present from the start (every target one shape, traced or not).
    traceparent: undefined,
    tracestate: undefined,
  };
}
