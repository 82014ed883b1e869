import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { Admin } from '../../admin/index.js';
import type { Config } from '../../config/schema.js';
import { maskedConfig } from '../../admin/config-view.js';
import { adminErrors } from '../../admin/errors.js';
import { actorName, actorOf } from './auth.js';

export interface ReloadResult {
  /** True when the config and every manifest of providers.dir loaded and applied. */
  ok: boolean;
  /** Why the config did not load or apply: nothing changed. */
  error?: string;
  added?: string[];
  removed?: string[];
  needs_restart?: string[];
  /** Loaded provider types in force, and the manifests refused (the rest of the reload applied). */
  providers?: { loaded: string[]; refused: { file: string; error: string; kept?: string }[] };
}

/** Channels, the effective configuration and reloads. */
export function registerSystemRoutes(app: FastifyInstance, admin: Admin, config: Config, reload?: () => Promise<ReloadResult>): void {
  app.get('/admin/api/channels', { schema: { tags: ['admin: channels'], summary: 'Channels: models, breaker state, requests, error rate and p50/p99 latency over 5 and 60 minutes' } }, async () => ({
    data: admin.channels.list(),
  }));

  app.post<{ Params: { name: string } }>(
    '/admin/api/channels/:name/test',
    { schema: { tags: ['admin: channels'], summary: 'A minimal real call through the channel: its latency and result', params: Type.Object({ name: Type.String({ maxLength: 64 }) }) } },
    async (request) => {
      const a = actorOf(request);
      const result = await admin.channels.test(request.params.name);
      await admin.audit.record(actorName(a), 'channel.test', request.params.name, { ok: result.ok, status: result.status, latency_ms: result.latency_ms }, request.adminClient.address);
      return result;
    },
  );

  app.get('/admin/api/models', { schema: { tags: ['admin: channels'], summary: 'Configured model ids and kinds' } }, async () => ({
    data: Object.entries(config.models)
      .map(([id, m]) => ({ id, kind: m.kind }))
      .sort((x, y) => x.id.localeCompare(y.id)),
  }));

  app.get('/admin/api/config', { schema: { tags: ['admin: config'], summary: 'The effective configuration, every secret masked' } }, async () => maskedConfig(config));

  app.post('/admin/api/reload', { schema: { tags: ['admin: config'], summary: 'Re-read the config file (channels, models, limits, providers.dir) on this instance and tell the others' } }, async (request) => {
    const a = actorOf(request);
    if (!reload) throw adminErrors.conflict('This instance was not started from a config file it can re-read.');
    const result = await reload();
    const refused = result.providers?.refused.map((r) => r.file) ?? [];
    await admin.audit.record(actorName(a), 'config.reload', '', { ok: result.ok, ...(result.error ? { error: result.error } : {}), ...(refused.length ? { refused } : {}) }, request.adminClient.address);
    // A refused manifest is reported in the answer (200, ok false); a config that did not load changed nothing (400).
    if (!result.ok && !result.providers) throw adminErrors.invalid(`The config file did not load; the running config is unchanged. ${result.error ?? 'See the instance log.'}`);
    if (result.error) throw adminErrors.invalid(`The config file did not load; the running config is unchanged. ${result.error}`);
    return result;
  });
}
