import type { ProviderTaskView } from '../providers/video-types.js';

// Neutral provider task state → gateway status, progress and fail_reason (the tables in docs/video.md).

export type GatewayStatus = 'SUBMITTED' | 'QUEUED' | 'IN_PROGRESS' | 'SUCCESS' | 'FAILURE';

/** Status only moves forward: a lower rank never replaces a higher one. */
export const RANK: Record<GatewayStatus, number> = { SUBMITTED: 0, QUEUED: 1, IN_PROGRESS: 2, SUCCESS: 3, FAILURE: 3 };

export function isTerminal(status: string): boolean {
  return status === 'SUCCESS' || status === 'FAILURE';
}

export interface MappedStatus {
  status: GatewayStatus;
  failReason: string;
}

/** The gateway status for a provider task; null when the provider's status word is unknown. */
export function mapProviderTask(v: ProviderTaskView): MappedStatus | null {
  const reason = (fallbackCode: string, fallbackMessage: string) => `${v.errorCode || fallbackCode}: ${v.errorMessage || fallbackMessage}`;
  switch (v.state) {
    case 'queued':
      return { status: 'QUEUED', failReason: '' };
    case 'running':
      return { status: 'IN_PROGRESS', failReason: '' };
    case 'succeeded':
      // Success without a video is no success for the client: fail it and refund.
      if (!v.result) return { status: 'FAILURE', failReason: 'invalid_response: The provider reported success without a video URL.' };
      // fail_reason carries the download URL of a success; content only the key can fetch has none to show.
      return { status: 'SUCCESS', failReason: v.result.kind === 'url' ? v.result.url : '' };
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
