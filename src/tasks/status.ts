import type { ProviderTaskView } from '../providers/video-types.js';
import { hasNonPublicLiteralHost, isHttpUrl } from '../upstream/address-guard.js';

/** The scheme of a URL for a message (never the rest: it may carry anything). */
function urlScheme(value: string): string {
  const m = /^([a-z][a-z0-9+.-]{0,20}):/i.exec(value);
  return m ? `${m[1].toLowerCase()}:` : 'no scheme';
}

// Neutral provider task state → gateway status, progress and fail_reason (the tables in docs/video.md).

export type GatewayStatus = 'SUBMITTED' | 'QUEUED' | 'IN_PROGRESS' | 'SUCCESS' | 'FAILURE';

/** Status only moves forward: a lower rank never replaces a higher one. */
export const RANK: Record<GatewayStatus, number> = { SUBMITTED: 0, QUEUED: 1, IN_PROGRESS: 2, SUCCESS: 3, FAILURE: 3 };

export function isTerminal(status: string): boolean {
  return status === 'SUCCESS' || status === 'FAILURE';
}

/**
 * Whether a task's video is content only the gateway can serve (with the channel's key): a SUCCESS
 * that stores no link. Every other SUCCESS holds the provider's http(s) URL (mapProviderTask).
 */
export function servedByGateway(task: { status: string; fail_reason: string }): boolean {
  return task.status === 'SUCCESS' && task.fail_reason === '';
}

export interface MappedStatus {
  status: GatewayStatus;
  failReason: string;
}

/**
 * The gateway status for a provider task; null when the provider's status word is unknown.
 * `allowPrivate`: the channel may hand out links to private addresses (the simulator).
 */
export function mapProviderTask(v: ProviderTaskView, opts: { allowPrivate?: boolean } = {}): MappedStatus | null {
  const reason = (fallbackCode: string, fallbackMessage: string) => `${v.errorCode || fallbackCode}: ${v.errorMessage || fallbackMessage}`;
  switch (v.state) {
    case 'queued':
      return { status: 'QUEUED', failReason: '' };
    case 'running':
      return { status: 'IN_PROGRESS', failReason: '' };
    case 'succeeded':
      // Success without a video is no success for the client: fail it and refund.
      if (!v.result) return { status: 'FAILURE', failReason: 'invalid_response: The provider reported success without a video URL.' };
      // Content only the channel's key can fetch has no link to store: the gateway serves it
      // (servedByGateway), and clients are shown its /content URL.
      if (v.result.kind === 'download') return { status: 'SUCCESS', failReason: '' };
      // The link goes to the client as is: only an http(s) link to a public host is handed out.
      if (!isHttpUrl(v.result.url)) return { status: 'FAILURE', failReason: `invalid_response: The provider's video URL is not an http(s) link (${urlScheme(v.result.url)}); the gateway hands out only http(s) links.` };
      if (!opts.allowPrivate && hasNonPublicLiteralHost(v.result.url)) {
        return { status: 'FAILURE', failReason: "invalid_response: The provider's video URL points at a private, loopback or link-local address; the gateway does not hand out such links." };
      }
      return { status: 'SUCCESS', failReason: v.result.url };
    case 'failed':
      return { status: 'FAILURE', failReason: reason('failed', 'The provider reported that the task failed.') };
    case 'cancelled':
      return { status: 'FAILURE', failReason: reason('cancelled', 'The task was cancelled at the provider.') };
    case 'expired':
      return { status: 'FAILURE', failReason: reason('expired', 'The task did not finish within its execution_expires_after at the provider.') };
    default:
      return null;
  }
}

export function timeoutReason(graceS: number): string {
  return `timeout: The task was still unfinished ${graceS} s after its execution expiry; the gateway stopped waiting for the provider.`;
}

/** Time constant of the running progress curve: a typical video task runs 40–120 s. */
const PROGRESS_TAU_S = 60;

/**
 * Progress of a running task: 10 % when first seen running, approaching 95 % as it runs
 * (10 + 85 × (1 − e^(−t/60 s))). It only grows with time and never claims completion.
 */
export function runningProgress(startTimeS: number, nowS: number): string {
  const t = Math.max(0, nowS - startTimeS);
  return `${Math.min(95, 10 + Math.floor(85 * (1 - Math.exp(-t / PROGRESS_TAU_S))))}%`;
}

/** What `progress` shows for a status at `nowS`; `stored` is the last progress the provider reported. */
export function progressOf(status: string, startTimeS: number, nowS: number, stored = ''): string {
  switch (status) {
    case 'SUBMITTED':
      return '0%';
    case 'QUEUED':
      return '5%';
    case 'IN_PROGRESS': {
      // The provider's own figure, when it reported one, wins over the curve while it is ahead.
      const curve = runningProgress(startTimeS || nowS, nowS);
      return parseInt(stored, 10) > parseInt(curve, 10) ? stored : curve;
    }
    default:
      return '100%';
  }
}
