import { timingSafeEqual } from 'node:crypto';
import type { RouteStep } from '../../pipeline/request.js';
import type { Reply, GatewayRequest } from '../../pipeline/request.js';
import type { AdminAccess, AdminActor } from '../../admin/tokens.js';
import { adminErrors } from '../../admin/errors.js';
import { requestClient, type RequestClient, type TrustedProxies } from '../../http/forwarded.js';

// Who may call /admin/api: an admin token in `Authorization: Bearer mga-…` (scripts, the CLI's
// peers), or a console session cookie. A cookie-authenticated request that changes state must
// carry the session's CSRF token in X-CSRF-Token: a cross-site page can make the browser send the
// cookie (SameSite=Strict already stops that in current browsers) but can never read the token.

export const SESSION_COOKIE = 'mediagate_admin';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim();
  }
  return undefined;
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The session cookie's attributes: HttpOnly, SameSite=Strict, Secure when the client's request was https. */
export function sessionCookie(client: RequestClient, value: string, maxAgeS: number): string {
  const secure = client.https ? '; Secure' : '';
  return `${SESSION_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeS}${secure}`;
}

/** The admin routes' check of who calls: an admin token, or a console session (with its CSRF token on a change). */
export function adminAuth(access: AdminAccess): RouteStep {
  return async (request: GatewayRequest) => {
    if (request.route?.options.adminPublic) return;
    const auth = request.headers.authorization;
    if (auth !== undefined) {
      const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
      const actor = m ? await access.authenticate(m[1]) : null;
      // An application key (mg-…) is no admin token: 401 like any other wrong token.
      if (!actor) throw adminErrors.unauthorized('This admin token is unknown, revoked or malformed (application keys are not accepted here).');
      request.adminActor = actor;
      return;
    }
    const session = await access.session(cookieValue(request.headers.cookie, SESSION_COOKIE));
    if (!session) throw adminErrors.unauthorized();
    if (!SAFE_METHODS.has(request.method)) {
      const sent = request.headers['x-csrf-token'];
      if (typeof sent !== 'string' || !session.csrf || !sameSecret(sent, session.csrf)) throw adminErrors.csrf();
    }
    request.adminActor = session;
  };
}

export function actorOf(request: GatewayRequest): AdminActor {
  if (!request.adminActor) throw adminErrors.unauthorized();
  return request.adminActor;
}

/** How an actor is named in the audit log. */
export function actorName(a: AdminActor): string {
  return `${a.name} (${a.tokenId})`;
}

/**
 * Headers of every admin API and console answer: no framing, no sniffing, scripts only from this
 * origin, and never stored by a browser or proxy cache (answers carry keys and account data).
 */
export const SECURITY_HEADERS: Record<string, string> = {
  'cache-control': 'no-store',
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; media-src 'self'; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
};

/** The first step of the admin routes: their headers, and the client each request came from. */
export function adminRequest(trusted: TrustedProxies): RouteStep {
  return async (request: GatewayRequest, reply: Reply) => {
    for (const k in SECURITY_HEADERS) reply.header(k, SECURITY_HEADERS[k]);
    request.adminClient = requestClient(request.raw, trusted);
  };
}
