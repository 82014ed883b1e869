import type { Readable } from 'node:stream';
import { Agent, request, type Dispatcher } from 'undici';
import type { Config } from '../../config/schema.js';
import type { TaskRow } from '../../store/repos/tasks.js';
import { guardedAgent, isHttpUrl } from '../../upstream/address-guard.js';
import type { UpstreamClient } from '../../upstream/client.js';
import { UpstreamFailure } from '../../upstream/failure.js';
import { urlNeedsRefresh } from '../../providers/signed-url.js';
import { bindTask, taskAllowsPrivateNetwork } from '../binding.js';
import { servedByGateway } from '../status.js';

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
  /** The client to providers: content only the channel's key can fetch goes through the adapter with it. */
  upstream: UpstreamClient;
  /** Re-reads the task from its provider for a newly signed URL (the row back unchanged when that fails). */
  refresh(row: TaskRow): Promise<TaskRow>;
}

/** Answers meaning "this link or file no longer serves the video". */
const GONE = new Set([401, 403, 404, 410]);

function discard(res: Dispatcher.ResponseData): void {
  res.body.on('error', () => undefined);
  res.body.destroy();
}

function parseData(text: string): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(text);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** What one attempt at the provider gave: the video, a refusal worth one refresh, or nothing to fetch. */
type Attempt = VideoStream | 'gone' | null;

/**
 * A finished task's video read from its provider, streamed (Range passed through): from the
 * provider's signed URL, or — when the result is content only the channel's key can fetch (the
 * task's SUCCESS holds no link) — through the adapter's `download` with the channel's credentials,
 * which never leave the gateway. A URL that has expired, or an answer that says the video is gone,
 * is retried once after re-reading the task from the provider; null means the provider no longer
 * serves the video. Result URLs are fetched through the address guard (public addresses only),
 * except for channels allowed on a private network (the simulator).
 */
export class ProviderVideoSource {
  private readonly guarded: Agent;
  private readonly open_: Agent;

  constructor(private readonly d: ProviderSourceDeps) {
    this.guarded = guardedAgent({ connectTimeoutMs: d.config.relay.connect_timeout_ms });
    this.open_ = new Agent({ connect: { timeout: d.config.relay.connect_timeout_ms } });
  }

  async open(row: TaskRow, range?: string, signal?: AbortSignal): Promise<VideoStream | null> {
    let current = urlNeedsRefresh(row.fail_reason, row.url_expires_at) ? await this.d.refresh(row) : row;
    for (let attempt = 0; ; attempt++) {
      if (current.status !== 'SUCCESS') return null;
      const got = servedByGateway(current) ? await this.download(current, range, signal) : await this.fromUrl(current, range, signal);
      if (got !== 'gone') return got;
      if (attempt > 0) return null;
      const fresh = await this.d.refresh(current);
      // The provider told nothing new (it forgot the task, or it is unreachable): the video is gone from it.
      if (fresh.fail_reason === current.fail_reason && fresh.data === current.data) return null;
      current = fresh;
    }
  }

  private async fromUrl(row: TaskRow, range: string | undefined, signal: AbortSignal | undefined): Promise<Attempt> {
    const url = row.fail_reason;
    if (!isHttpUrl(url)) return null;
    let res: Dispatcher.ResponseData;
    try {
      res = await request(url, {
        method: 'GET',
        headers: range ? { range } : {},
        dispatcher: taskAllowsPrivateNetwork(this.d.config.channels, row) ? this.open_ : this.guarded,
        signal,
        headersTimeout: this.d.config.relay.first_byte_timeout_ms,
        bodyTimeout: this.d.config.relay.stream_idle_timeout_ms,
      });
    } catch (err) {
      throw new VideoFetchError(`the provider's video URL could not be read: ${(err as Error).message}`);
    }
    return this.answer(res, "the provider's video URL");
  }

  /** Content the channel's key fetches: the task's adapter downloads it from the stored provider object. */
  private async download(row: TaskRow, range: string | undefined, signal: AbortSignal | undefined): Promise<Attempt> {
    const bound = bindTask(this.d.config.channels, row);
    const task = parseData(row.data);
    // The channel was removed from the configuration (its key with it), or it cannot download.
    if (!bound?.adapter.download || !task) return null;
    let res: Dispatcher.ResponseData;
    try {
      res = await bound.adapter.download({ upstream: this.d.upstream, signal }, bound.target, task, range);
    } catch (err) {
      if (err instanceof UpstreamFailure && err.kind === 'status' && GONE.has(err.status)) return 'gone';
      throw new VideoFetchError(`the provider's video could not be downloaded: ${(err as Error).message}`);
    }
    return this.answer(res, "the provider's video download");
  }

  private answer(res: Dispatcher.ResponseData, what: string): Attempt {
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
    if (!GONE.has(res.statusCode)) throw new VideoFetchError(`${what} answered HTTP ${res.statusCode}`);
    return 'gone';
  }

  async close(): Promise<void> {
    await Promise.all([this.guarded.close(), this.open_.close()]);
  }
}
