import type { Routes } from '../../pipeline/gateway.js';
import { Type } from '@sinclair/typebox';
import type { Admin } from '../../admin/index.js';
import type { Config } from '../../config/schema.js';
import { maskedConfig } from '../../admin/config-view.js';
import { adminErrors } from '../../admin/errors.js';
import { actorName, actorOf } from './auth.js';
import { auditDetail } from '../../admin/channel-editor.js';

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
  /** Stored channels the reloaded config leaves without a model or provider type they name. */
  channel_problems?: { channel: string; problem: string }[];
}

/** Channels, the effective configuration and reloads. */
export function registerSystemRoutes(app: Routes, admin: Admin, config: Config, reload?: () => Promise<ReloadResult>): void {
  const tags = ['admin: channels'];
  const Name = Type.Object({ name: Type.String({ maxLength: 64 }) });
  // The body is checked by the channel schema itself (ChannelEditor), so its messages name the field and what it allows.
  const Body = Type.Record(Type.String(), Type.Unknown());

  app.get('/admin/api/channels', { schema: { tags, summary: 'Channels (config file and runtime): fields, credentials as "set", breaker, requests, error rate and p50/p99 latency over 5 and 60 minutes' } }, async () => ({
    data: admin.channels.list(),
  }));

  app.get<{ Params: { name: string } }>('/admin/api/channels/:name', { schema: { tags, summary: 'One channel', params: Name } }, async (request) => admin.channels.get(request.params.name));

  app.post<{ Body: Record<string, unknown> }>(
    '/admin/api/channels',
    { schema: { tags, summary: 'Add a channel at runtime (the fields of a config file channel); every instance serves it within 2 s', body: Body } },
    async (request, reply) => {
      const a = actorOf(request);
      const channel = await admin.channels.editor.create(request.body);
      await admin.audit.record(actorName(a), 'channel.create', channel.name, auditDetail(request.body), request.adminClient.address);
      return reply.code(201).send(await admin.channels.applied(channel.name));
    },
  );

  app.patch<{ Params: { name: string }; Body: Record<string, unknown> }>(
    '/admin/api/channels/:name',
    { schema: { tags, summary: 'Change the fields sent (null clears an optional one); a config file channel takes only enabled', params: Name, body: Body } },
    async (request) => {
      const a = actorOf(request);
      const { name } = request.params;
      const channel = await admin.channels.editor.update(name, request.body);
      const keys = Object.keys(request.body);
      const action = keys.length === 1 && keys[0] === 'enabled' ? (channel.enabled ? 'channel.enable' : 'channel.disable') : 'channel.update';
      await admin.audit.record(actorName(a), action, name, auditDetail(request.body), request.adminClient.address);
      return admin.channels.applied(name);
    },
  );

  app.delete<{ Params: { name: string } }>('/admin/api/channels/:name', { schema: { tags, summary: 'Remove a channel added at runtime (its open tasks still finish through it)', params: Name } }, async (request) => {
    const a = actorOf(request);
    const { name } = request.params;
    const { credentials } = await admin.channels.editor.remove(name);
    await admin.audit.record(actorName(a), 'channel.remove', name, { credentials }, request.adminClient.address);
    await admin.channels.refreshed();
    return { name, removed: true, credentials };
  });

  app.get<{ Params: { name: string } }>(
    '/admin/api/channels/:name/balance',
    { schema: { tags, summary: 'The channel\'s balance or quota at its provider (a read that costs nothing, kept 60 s; refresh=true reads again)', params: Name } },
    async (request) => {
      const q = request.query as Record<string, unknown>;
      const refresh = q.refresh;
      if (refresh !== undefined && refresh !== 'true' && refresh !== 'false') throw adminErrors.invalid('refresh: must be true or false');
      for (const k of Object.keys(q)) if (k !== 'refresh') throw adminErrors.invalid(`${k}: unknown parameter; allowed: refresh`);
      return admin.channels.balance(request.params.name, refresh === 'true');
    },
  );

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

  app.post<{ Params: { name: string } }>(
    '/admin/api/channels/:name/probe',
    { schema: { tags, summary: 'Run the channel\'s health probe now (a model list or its base URL: nothing billable); a channel taken out is put back when it answers', params: Name } },
    async (request) => {
      const a = actorOf(request);
      const result = await admin.channels.probe(request.params.name);
      await admin.audit.record(actorName(a), 'channel.probe', request.params.name, { ok: result.ok, status: result.status, latency_ms: result.latency_ms }, request.adminClient.address);
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
