// Secrets must never leave the gateway in an answer or a log line: neither a client's key (which a
// client may paste into a model name or a path) nor an upstream provider's key (which a provider
// may echo in an error message).

const CLIENT_KEY = /mg-[0-9A-Za-z]{12,}/g;
const ADMIN_TOKEN = /mga-[0-9A-Za-z]{12,}/g;
const upstreamSecrets = new Set<string>();

/** Registers an upstream key to scrub from every message. */
export function registerSecret(secret: string | undefined): void {
  if (secret && secret.length >= 8) upstreamSecrets.add(secret);
}

export function redact(text: string): string {
  let out = text.replace(CLIENT_KEY, 'mg-[redacted]').replace(ADMIN_TOKEN, 'mga-[redacted]');
  for (const s of upstreamSecrets) if (out.includes(s)) out = out.split(s).join('[redacted]');
  return out;
}
