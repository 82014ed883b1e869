import type { Readable } from 'node:stream';
import { Agent, request, type Dispatcher } from 'undici';
import type { Config } from '../../config/schema.js';
import type { TaskRow } from '../../store/repos/tasks.js';
import { allowsPrivateNetwork, guardedAgent, isHttpUrl } from '../../upstream/address-guard.js';
import { urlNeedsRefresh } from '../../providers/signed-url.js';

/** A video body on its way to a client or to storage, with the headers that describe it. */
export interface VideoStream {
  status: number;
  contentType: string;
  contentLength: string | undefined;
  contentRange: string | undefined;
  body: Readable;
}

export class VideoFetchError extends Error {}

export interface ProviderSourceDeps {
  config: Pick<Config, 'channels' | 'relay'>;
  /** Re-reads the task from its provider for a newly signed URL (the row back unchanged when that fails). */
  refresh(row: TaskRow): Promise<TaskRow>;
}

const GONE = new Set([401, 403, 404, 410]);

function discard(res: Dispatcher.ResponseData): void {
  res.body.on('error', () => undefined);
  res.body.destroy();
}

/**
 * A finished task's video read from the provider's signed URL, streamed (Range passed through).
 * A URL that has expired, or that the provider refuses, is refreshed once from the provider's task;
 * null means the provider no longer serves the video. Result URLs are fetched through the address
 * guard (public addresses only), except for channels allowed on a private network (the simulator).
 */
export class ProviderVideoSource {
  private readonly guarded: Agent;
  private readonly open_: Agent;

  constructor(private readonly d: ProviderSourceDeps) {
    this.guarded = guardedAgent({ connectTimeoutMs: d.config.relay.connect_timeout_ms });
    this.open_ = new Agent({ connect: { timeout: d.config.relay.connect_timeout_ms } });
  }

  async open(row: TaskRow, range?: string, signal?: AbortSignal): Promise<VideoStream | null> {
    const channel = this.d.config.channels.find((c) => c.name === row.channel);
    const dispatcher = channel && allowsPrivateNetwork(channel) ? this.open_ : this.guarded;
    let current = urlNeedsRefresh(row.fail_reason, row.url_expires_at) ? await this.d.refresh(row) : row;
    for (let attempt = 0; ; attempt++) {
      const url = current.fail_reason;
      if (current.status !== 'SUCCESS' || !isHttpUrl(url)) return null;
      let res: Dispatcher.ResponseData;
      try {
        res = await request(url, {
          method: 'GET',
          headers: range ? { range } : {},
          dispatcher,
          signal,
          headersTimeout: this.d.config.relay.first_byte_timeout_ms,
          bodyTimeout: this.d.config.relay.stream_idle_timeout_ms,
        });
      } catch (err) {
        throw new VideoFetchError(`the provider's video URL could not be read: ${(err as Error).message}`);
      }
      if (res.statusCode === 200 || res.statusCode === 206 || res.statusCode === 416) {
        const h = res.headers;
        return {
          status: res.statusCode,
          contentType: String(h['content-type'] ?? 'video/mp4'),
          contentLength: h['content-length'] === undefined ? undefined : String(h['content-length']),
          contentRange: h['content-range'] === undefined ? undefined : String(h['content-range']),
          body: res.body,
        };
      }
      discard(res);
      if (!GONE.has(res.statusCode)) throw new VideoFetchError(`the provider's video URL answered HTTP ${res.statusCode}`);
      if (attempt > 0) return null;
      const fresh = await this.d.refresh(current);
      // The provider gave no new URL (it forgot the task, or it is unreachable): the video is gone from it.
      if (fresh.fail_reason === url) return null;
      current = fresh;
    }
  }

  async close(): Promise<void> {
    await Promise.all([this.guarded.close(), this.open_.close()]);
  }
}
