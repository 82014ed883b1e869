import { createHmac, randomBytes } from 'node:crypto';

// Standard Webhooks signatures: HMAC-SHA256 over "<webhook-id>.<webhook-timestamp>.<body>" with the
// secret's bytes (the base64 after "whsec_"), sent as "v1,<base64 signature>"; several signatures
// (during a rotation) are separated by spaces.

export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

export function signature(secret: string, id: string, timestampS: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestampS}.${body}`).digest('base64')}`;
}

/** The three Standard Webhooks headers for one attempt. */
export function signedHeaders(secrets: string[], id: string, timestampS: number, body: string): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampS),
    'webhook-signature': secrets.map((s) => signature(s, id, timestampS, body)).join(' '),
  };
}
