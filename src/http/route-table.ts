import type { FastifyInstance } from 'fastify';
import { GatewayError, errorBody, familyHeaders, familyOf } from './errors.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route registered on the app, for 405 answers and for tests that must cover all endpoints. */
    routeTable: RouteTable;
  }
}

export interface RouteInfo {
  method: string;
  url: string;
  /** Whether the route needs a key (`config.auth`). */
  auth: boolean;
  /** The ledger endpoint name of a billable route (`config.billable`): every request to it gets a usage row. */
  billable?: string;
}

interface Entry extends RouteInfo {
  segments: string[];
}

/**
 * The routes of the app, collected with an onRoute hook so routes added by any module, at any
 * time before the app starts, are known. Fastify's router answers "no route for this method and
 * path"; this table tells a wrong method (405 + Allow) from an unknown path (404).
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
}

/** Fastify patterns: static segments, segments holding `:param` (any non-empty segment), and `*` (the rest). */
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

/** Collects routes and answers requests no route takes: 405 with Allow, or 404, as JSON in the path's family. */
export function registerRouteErrors(app: FastifyInstance): RouteTable {
  const table = new RouteTable();
  app.decorate('routeTable', table);
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const config = route.config as { auth?: boolean; billable?: string } | undefined;
    for (const m of methods) table.add(String(m).toUpperCase(), route.url, Boolean(config?.auth), config?.billable);
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0];
    const family = familyOf(request.url);
    const allowed = table.allowed(path);
    reply.headers(familyHeaders(family));
    if (allowed.length) {
      const g = new GatewayError(405, 'method_not_allowed', `${printable(path)} does not accept ${request.method}; it accepts ${allowed.join(', ')}.`);
      return reply.code(405).header('allow', allowed.join(', ')).send(errorBody(family, g));
    }
    const g = new GatewayError(404, 'not_found', `No route ${request.method} ${printable(path)}.`);
    return reply.code(404).send(errorBody(family, g));
  });
  return table;
}
