import type { Config } from '../../config/schema.js';
import { servedByGateway } from '../status.js';

// The gateway's own absolute URLs (a task's /content link): from server.public_url when set, else
// from what the client called (scheme and Host of the request), else the listening address.

export function baseFromConfig(config: Pick<Config, 'server'>): string {
  if (config.server.public_url) return config.server.public_url.replace(/\/+$/, '');
  const host = config.server.host === '0.0.0.0' || config.server.host === '::' ? '127.0.0.1' : config.server.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${config.server.port}`;
}

/** The base for an answer to a request: public_url, else the request's scheme and Host. */
export function baseForRequest(config: Pick<Config, 'server'>, request: { protocol: string; host: string }): string {
  if (config.server.public_url || !request.host) return baseFromConfig(config);
  return `${request.protocol}://${request.host}`;
}

export function contentUrl(base: string, taskId: string): string {
  return `${base}/v1/video/generations/${encodeURIComponent(taskId)}/content`;
}

/**
 * The record as clients see it (every read, list, cancel answer and webhook): a SUCCESS's
 * fail_reason is the gateway's /content URL when the video is content only the channel's key can
 * fetch (Veo, Hailuo), and, with `storage.public_url_mode: gateway`, for every provider instead of
 * its signed URL (which expires).
 */
export function presentRecord<R extends { task_id: string; status: string; fail_reason: string }>(config: Pick<Config, 'storage'>, record: R, base: string): R {
  if (record.status !== 'SUCCESS' || (config.storage.public_url_mode !== 'gateway' && !servedByGateway(record))) return record;
  return { ...record, fail_reason: contentUrl(base, record.task_id) };
}
