import type { Routes } from '../../pipeline/gateway.js';
import { Type } from '@sinclair/typebox';
import type { Admin } from '../../admin/index.js';
import type { Config } from '../../config/schema.js';
import { adminErrors } from '../../admin/errors.js';
import { LoginLimiter } from './login-limit.js';
import { actorName, actorOf, sessionCookie } from './auth.js';

const tags = ['admin: session'];

/** The console's login: an admin token exchanged for a session cookie and a CSRF token. */
export function registerSessionRoutes(app: Routes, admin: Admin, config: Config): void {
  const limiter = new LoginLimiter(config.admin.login_per_minute);

  app.post<{ Body: { token: string } }>(
    '/admin/api/session',
    {
      adminPublic: true,
      schema: { tags, summary: 'Log in: exchange an admin token for a session cookie', body: Type.Object({ token: Type.String({ maxLength: 200 }) }, { additionalProperties: false }) },
    },
    async (request, reply) => {
      const client = request.adminClient;
      const wait = limiter.take(client.address);
      if (wait) throw adminErrors.tooManyLogins(wait);
      const ttl = config.admin.session_ttl_s;
      const opened = await admin.access.login(request.body.token, ttl);
      if (!opened) {
        await admin.audit.record('unknown', 'session.login_failed', '', {}, client.address);
        throw adminErrors.unauthorized('This admin token is unknown or revoked.');
      }
      limiter.refund(client.address);
      await admin.audit.record(actorName(opened.actor), 'session.login', opened.actor.tokenId, {}, client.address);
      reply.header('set-cookie', sessionCookie(client, opened.sessionId, ttl));
      return { name: opened.actor.name, csrf_token: opened.csrf, expires_at: new Date(opened.expiresAt).toISOString() };
    },
  );

  app.get('/admin/api/session', { schema: { tags, summary: 'The current session (and its CSRF token)' } }, async (request) => {
    const a = actorOf(request);
    return { name: a.name, token_id: a.tokenId, csrf_token: a.csrf };
  });

  app.delete('/admin/api/session', { schema: { tags, summary: 'Log out: end the session and clear its cookie' } }, async (request, reply) => {
    const a = actorOf(request);
    if (a.sessionHash) await admin.access.logout(a.sessionHash);
    await admin.audit.record(actorName(a), 'session.logout', a.tokenId, {}, request.adminClient.address);
    reply.header('set-cookie', sessionCookie(request.adminClient, '', 0));
    return { ok: true };
  });
}
