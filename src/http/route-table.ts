import { GatewayError } from './errors.js';

export interface RouteInfo {
  method: string;
  url: string;
  /** Whether the route needs a key (`auth`). */
  auth: boolean;
  /** The ledger endpoint name of a billable route (`billable`): every request to it gets a usage row. */
  billable?: string;
}

interface Entry extends RouteInfo {
  segments: string[];
}

/**
 * Every route of the app, as registered. The router answers "no route for this method and path";
 * this table tells a wrong method (405 + Allow) from an unknown path (404).
 */
export class RouteTable {
  private readonly entries: Entry[] = [];

  add(method: string, url: string, auth = false, billable?: string): void {
    if (this.entries.some((e) => e.method === method && e.url === url)) return;
    this.entries.push({ method, url, auth, billable, segments: url.split('/') });
  }

  routes(): RouteInfo[] {
    return this.entries.map(({ method, url, auth, billable }) => ({ method, url, auth, billable }));
  }

  /** Methods some route accepts on this concrete path (no query), sorted; empty when none does. */
  allowed(path: string): string[] {
    const parts = path.split('/').map(decodeSegment);
    const methods = new Set<string>();
    for (const e of this.entries) if (matches(e.segments, parts)) methods.add(e.method);
    return [...methods].sort();
  }

  /** The answer to a request no route takes: 405 with Allow when the path takes other methods, else 404. */
  unrouted(method: string, url: string): GatewayError {
    const path = url.split('?')[0];
    const allowed = this.allowed(path);
    if (allowed.length) return new GatewayError(405, 'method_not_allowed', `${printable(path)} does not accept ${method}; it accepts ${allowed.join(', ')}.`, { allow: allowed.join(', ') });
    return new GatewayError(404, 'not_found', `No route ${method} ${printable(path)}.`);
  }
}

/** Route patterns: static segments, segments holding `:param` (any non-empty segment), and `*` (the rest). */
function matches(pattern: string[], parts: string[]): boolean {
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i];
    if (p === '*') return parts.length >= i;
    if (i >= parts.length) return false;
    if (p.includes(':')) {
      if (!parts[i]) return false;
      continue;
    }
    if (p.includes('*')) return parts[i].startsWith(p.slice(0, p.indexOf('*')));
    if (p !== parts[i]) return false;
  }
  return pattern.length === parts.length;
}

/** Decodes like the router does, keeping an encoded slash inside its segment. */
function decodeSegment(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** Shown in a 404/405 message only when plainly harmless; the error body still redacts keys. */
function printable(path: string): string {
  return path.length <= 128 && /^[A-Za-z0-9/_.-]*$/.test(path) ? path : '(this path)';
}
