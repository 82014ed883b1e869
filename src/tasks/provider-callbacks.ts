import type { Config } from '../config/schema.js';
import { randomBase62 } from '../ids.js';
import { GatewayError } from '../http/errors.js';
import type { TasksRepo } from '../store/repos/tasks.js';
import { baseFromConfig } from './content/gateway-url.js';
import { inTaskSpan, type TracedTask } from '../telemetry/tasks.js';

// Provider callbacks. When server.public_url is set, a task created at a provider that calls back
// (its adapter's acceptsCallback: Ark, Kling, MiniMax) carries the URL public_url + /v1/video/callbacks/<token>, the
// token 32 random base62 characters stored with the task. A call to that URL is only a hint that
// the task moved: the gateway then polls the task at once, and never reads status, result or money
// from the callback's body. Such tasks are otherwise polled every tasks.callback_poll_interval_ms.

export const CALLBACK_PATH = '/v1/video/callbacks/';
const TOKEN = /^[0-9A-Za-z]{32}$/;

export function newCallbackToken(): string {
  return randomBase62(32);
}

export function providerCallbackUrl(config: Pick<Config, 'server'>, token: string): string {
  return `${baseFromConfig(config)}${CALLBACK_PATH}${token}`;
}

export interface ProviderCallbackDeps {
  repo: TasksRepo;
  /** Looks for due tasks now (the poller's wake). */
  pollSoon: () => void;
}

/** The same answer for a malformed, unknown or forgotten token: nothing about tasks is revealed. */
const unknownToken = () => new GatewayError(404, 'not_found', 'Not found.');

export class ProviderCallbacks {
  constructor(private readonly d: ProviderCallbackDeps) {}

  /**
   * Takes a provider's callback for `token`. Returns what to answer: `{challenge}` echoed for a URL
   * check (MiniMax Hailuo verifies a callback URL that way before the task exists), else `{}`.
   */
  async receive(token: string, body: unknown, now = Date.now()): Promise<Record<string, string>> {
    if (!TOKEN.test(token)) throw unknownToken();
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw new GatewayError(400, 'invalid_request', 'A callback body must be a JSON object.');
    }
    const challenge = (body as Record<string, unknown>).challenge;
    if (typeof challenge === 'string' && challenge.length <= 256) return { challenge };
    // The callback joins the task's own trace (the request's server span stays in its own).
    const found = await this.d.repo.pollNow(token, now, (task) => traceCallback(task));
    if (found === null) throw unknownToken();
    if (found === 'open') this.d.pollSoon();
    return {};
  }
}

/** A provider's callback as a span of the task's trace. */
function traceCallback(task: TracedTask): void {
  void inTaskSpan('video_task callback', task, async () => task);
}
