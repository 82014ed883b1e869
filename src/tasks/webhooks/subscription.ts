import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { WebhooksConfig } from '../../config/schema.js';
import { errors } from '../../http/errors.js';
import { isNonPublicAddress } from '../../upstream/address-guard.js';

// callback_url / callback_events of a create body: where the task's webhooks go and on which
// status moves. Checked at create (scheme, address after DNS resolution) and again on every
// delivery (the address guard on the connection itself), since DNS may change in between.

export const WEBHOOK_EVENTS = ['QUEUED', 'IN_PROGRESS', 'SUCCESS', 'FAILURE'];
const DEFAULT_EVENTS = ['SUCCESS', 'FAILURE'];

export interface Subscription {
  url: string;
  events: string[];
}

const bad = (message: string, param: string) => errors.invalidRequest(message, param);

/** Loopback is where local development receivers live; allowed only with webhooks.allow_insecure. */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h.endsWith('.localhost') || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h);
}

export function parseSubscription(body: Record<string, unknown>, settings: Pick<WebhooksConfig, 'allow_insecure'>): Subscription | null {
  const raw = body.callback_url;
  if (raw === undefined || raw === null) {
    if (body.callback_events !== undefined) throw bad('callback_events needs a callback_url.', 'callback_events');
    return null;
  }
  if (typeof raw !== 'string' || raw.length > 2048) throw bad('callback_url must be an absolute https URL (at most 2048 characters).', 'callback_url');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw bad('callback_url must be an absolute https URL.', 'callback_url');
  }
  if (url.username || url.password) throw bad('callback_url must not carry credentials; authenticate the webhook by its signature.', 'callback_url');
  const loopback = isLoopbackHost(url.hostname);
  if (settings.allow_insecure) {
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) throw bad('callback_url must be https (http only to a loopback address).', 'callback_url');
  } else if (url.protocol !== 'https:') {
    throw bad('callback_url must be an https URL.', 'callback_url');
  }
  let events = DEFAULT_EVENTS;
  if (body.callback_events !== undefined) {
    const e = body.callback_events;
    if (!Array.isArray(e) || e.length === 0 || e.some((x) => typeof x !== 'string' || !WEBHOOK_EVENTS.includes(x))) {
      throw bad(`callback_events must be a non-empty list of: ${WEBHOOK_EVENTS.join(', ')}.`, 'callback_events');
    }
    events = [...new Set(e as string[])];
  }
  return { url: url.toString(), events };
}

/**
 * Refuses a callback host that is or resolves to a private, loopback, link-local or metadata
 * address (loopback is let through with allow_insecure). A name that does not resolve is refused
 * with the same words, and the address is not told: the gateway's network and resolver are not
 * something a key holder may map through this answer.
 */
export async function checkCallbackAddress(sub: Subscription, settings: Pick<WebhooksConfig, 'allow_insecure'>): Promise<void> {
  const host = new URL(sub.url).hostname.replace(/^\[|\]$/g, '');
  if (settings.allow_insecure && isLoopbackHost(host)) return;
  const addresses = isIP(host) ? [host] : await lookup(host, { all: true }).then((list) => list.map((a) => a.address), () => []);
  if (addresses.length === 0 || addresses.some((a) => isNonPublicAddress(a))) {
    throw bad(`callback_url: the host "${host}" is not, or does not resolve to, a public address; webhooks go to public addresses only.`, 'callback_url');
  }
}
