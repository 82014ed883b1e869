// Secrets must never leave the gateway in an answer, a stored task or a log line: neither a
// client's key (which a client may paste into a model name or a path) nor an upstream secret (which
// a provider may echo in an error message, or put into a URL's query string). An upstream secret
// is scrubbed in every form a provider is likely to echo it in: as is, URL-encoded, and base64 or
// base64url encoded — also inside a longer base64 text (an `Authorization: Basic` value, a token),
// whatever its offset there.

const CLIENT_KEY = /mga?-[0-9A-Za-z]{12,}/g;
const REDACTED = '[redacted]';
/** Shorter encoded fragments would match ordinary text by chance. */
const MIN_FORM_LENGTH = 8;
/** Every registered form, longest first (a longer form must be replaced before a fragment of it). */
let forms: string[] = [];
const registered = new Set<string>();
/**
 * One scan that finds whatever redact() would replace: the start of a client key (every CLIENT_KEY
 * match begins with one) or any registered form. Most texts (every successful answer)
 * contain none, and one regex pass costs less than a replace plus one search per form.
 */
let suspect = buildSuspect();

function buildSuspect(): RegExp {
  const escaped = forms.map((f) => f.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&'));
  return new RegExp(['mga?-[0-9A-Za-z]{12}', ...escaped].join('|'));
}

/**
 * The parts of base64(… secret …) that depend on the secret alone, for each of the three offsets
 * the secret can start at within the encoded text (characters mixing in neighbouring bytes dropped).
 */
function base64Fragments(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  const out: string[] = [];
  for (let k = 0; k < 3; k++) {
    const text = Buffer.concat([Buffer.alloc(k), bytes]).toString('base64').replace(/=+$/, '');
    const head = [0, 2, 3][k];
    const total = k + bytes.length;
    const tail = total % 3 === 0 ? 0 : 1;
    const fragment = text.slice(head, text.length - tail);
    if (fragment.length >= MIN_FORM_LENGTH) out.push(fragment);
  }
  return out;
}

function formsOf(secret: string): string[] {
  const out = new Set<string>([secret, encodeURIComponent(secret), encodeURIComponent(secret).replace(/%20/g, '+')]);
  for (const b64 of base64Fragments(secret)) {
    out.add(b64);
    out.add(b64.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return [...out].filter((f) => f.length >= MIN_FORM_LENGTH);
}

/** Registers an upstream secret (an API key, a signing secret, a password) to scrub everywhere. */
export function registerSecret(secret: string | undefined | null): void {
  if (!secret || secret.length < MIN_FORM_LENGTH || registered.has(secret)) return;
  registered.add(secret);
  forms = [...new Set([...forms, ...formsOf(secret)])].sort((a, b) => b.length - a.length);
  suspect = buildSuspect();
}

/** Registers every secret a channel holds (`api_key`, and `api_secret` where the provider signs requests). */
export function registerChannelSecrets(channel: { api_key?: string; api_secret?: string }): void {
  registerSecret(channel.api_key);
  registerSecret(channel.api_secret);
}

export function redact(text: string): string {
  if (!suspect.test(text)) return text;
  let out = text.replace(CLIENT_KEY, (m) => `${m.startsWith('mga-') ? 'mga' : 'mg'}-${REDACTED}`);
  for (const f of forms) if (out.includes(f)) out = out.split(f).join(REDACTED);
  return out;
}

/**
 * Scrubs every string inside a provider's answer (a task object, an image result), URLs included:
 * a URL keeps its shape and its own signature, only a secret inside it is replaced.
 */
export function redactDeep<T>(value: T): T {
  if (typeof value === 'string') return redact(value) as T;
  if (Array.isArray(value)) return value.map(redactDeep) as T;
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactDeep(v)])) as T;
  return value;
}
