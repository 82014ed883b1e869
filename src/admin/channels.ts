import type { Config, ChannelConfig } from '../config/schema.js';
import type { Relay } from '../relay/relay.js';
import type { ChannelStats, WindowStats } from '../relay/channel-stats.js';
import type { UpstreamClient } from '../upstream/client.js';
import { ChatRelay } from '../relay/chat.js';
import { targetFor } from '../upstream/target.js';
import { UpstreamFailure } from '../upstream/failure.js';
import { redact } from '../http/redact.js';
import { adminErrors } from './errors.js';
import { maskUrl } from './config-view.js';
import type { ChannelEditor } from './channel-editor.js';
import { channelProblem, type ChannelSource, type RuntimeChannels } from '../cluster/channels.js';
import type { ChannelHealth, ChannelHealthView, ProbeResult } from '../relay/health.js';
import { probeDescription } from '../relay/health-probe.js';
import { providerFor } from '../providers/index.js';
import type { BalanceAmount } from '../providers/balance.js';

/** How long a balance read is kept before the provider is asked again. */
export const BALANCE_CACHE_MS = 60_000;

export interface ChannelBalance {
  channel: string;
  type: string;
  /** Whether the gateway knows a balance read for this channel (its type, or an openai channel's settings.balance). */
  supported: boolean;
  /** What is read (`GET /v1/organization`), when supported. */
  read?: string;
  /** The read answered with the amounts. */
  ok: boolean;
  balances: BalanceAmount[];
  /** The provider's HTTP status when the read failed (null: no answer). */
  status?: number | null;
  message: string;
  fetched_at: string | null;
  /** Served from the last read (at most cache_s old). */
  cached: boolean;
  cache_s: number;
}

export interface ChannelView {
  name: string;
  /** `config`: from the config file (read-only but for enabled); `api`: added at runtime. */
  source: ChannelSource;
  type: string;
  base_url: string;
  /** "set" when the channel has one; never the value. */
  api_key?: 'set';
  api_secret?: 'set';
  settings: Record<string, string>;
  enabled: boolean;
  priority: number;
  weight: number;
  models: string[];
  model_map: Record<string, string>;
  upstream_format?: string;
  poll_concurrency: number;
  allow_private_network?: boolean;
  /** Why a stored channel serves less than it names under the running config (a model or provider type gone); null when it serves all. */
  problem: string | null;
  /** What the balance read of this channel sends, or null when none is known (GET …/balance says so). */
  balance_read: string | null;
  /** The channel's own scheduled-test interval, when it sets one (0: none). */
  test_interval_s?: number;
  /** Seconds between scheduled tests in force: its own, else relay.health.test_interval_s; 0 = none. */
  scheduled_test_s: number;
  breaker: 'closed' | 'open' | 'half_open';
  /** Health from real traffic: in rotation or taken out, error rates, last error, probes. */
  health: ChannelHealthView;
  last_5m: WindowStats;
  last_60m: WindowStats;
}

export interface ChannelTestResult {
  channel: string;
  ok: boolean;
  /** What was sent: a one-token chat completion, or a plain request to the channel's origin. */
  probe: string;
  model: string | null;
  latency_ms: number;
  status: number | null;
  message: string;
}

export interface ChannelAdminDeps {
  config: Config;
  relay: Relay;
  stats: ChannelStats;
  upstream: UpstreamClient;
  channels: RuntimeChannels;
  editor: ChannelEditor;
  health: ChannelHealth;
  /** Tells the other instances (they re-read within a second anyway). */
  changed?: () => Promise<void> | void;
}

export class ChannelAdmin {
  /** Balance reads per channel: the channel object read with (a change reads anew), when, and the answer (or the read in flight). */
  private readonly balances = new Map<string, { channel: ChannelConfig; at: number; answer: Promise<ChannelBalance> }>();

  constructor(private readonly d: ChannelAdminDeps) {}

  /**
   * The channel's balance or quota at its provider: one read that costs nothing, kept for
   * BALANCE_CACHE_MS (per instance) unless `refresh`. Never counted in the channel's health or
   * statistics; the credentials go to the provider only, and a failure's message is scrubbed.
   */
  async balance(name: string, refresh = false, now = Date.now()): Promise<ChannelBalance> {
    const channel = this.d.config.channels.find((c) => c.name === name && this.d.channels.sourceOf(name));
    if (!channel) throw adminErrors.notFound(`The channel ${JSON.stringify(name)}`);
    const capability = providerFor(channel.type)?.balance;
    const read = capability?.describe(channel.settings ?? {});
    const base = { channel: name, type: channel.type, cache_s: BALANCE_CACHE_MS / 1000 };
    if (!capability || !read) {
      const hint = channel.type === 'openai' ? ' For an openai channel in front of DeepSeek, Moonshot or OpenRouter, set settings.balance (deepseek, moonshot, moonshot-cn, openrouter).' : '';
      return { ...base, supported: false, ok: false, balances: [], message: `No balance read is known for a ${channel.type} channel: its provider documents no balance or quota endpoint the gateway reads.${hint}`, fetched_at: null, cached: false };
    }
    const kept = this.balances.get(name);
    if (!refresh && kept && kept.channel === channel && now - kept.at < BALANCE_CACHE_MS) return { ...(await kept.answer), cached: true };
    const answer = (async (): Promise<ChannelBalance> => {
      const done = { ...base, supported: true, read, cached: false, fetched_at: new Date(now).toISOString() };
      try {
        const balances = await capability.read({ upstream: this.d.upstream, signal: AbortSignal.timeout(15_000) }, targetFor(channel, channel.models[0] ?? ''));
        return { ...done, ok: true, balances, message: balances.length ? 'read' : 'the provider reported no balance' };
      } catch (err) {
        const f = err instanceof UpstreamFailure ? err : null;
        const why = f?.status === 401 || f?.status === 403 ? "the provider refused the channel's credentials for its balance read" : f ? `${f.kind}: ${f.message}` : (err as Error).message;
        return { ...done, ok: false, balances: [], status: f?.status || null, message: redact(f && (f.status === 401 || f.status === 403) ? `${why} (${f.message})` : why) };
      }
    })();
    this.balances.set(name, { channel, at: now, answer });
    const out = await answer;
    // A failed read is not kept: the next look asks again.
    if (!out.ok && this.balances.get(name)?.answer === answer) this.balances.delete(name);
    return out;
  }

  /** The channels in force: the config file's first, then those added at runtime (removed ones are not shown). */
  list(now = Date.now()): ChannelView[] {
    const out: ChannelView[] = [];
    for (const c of this.d.config.channels) {
      const source = this.d.channels.sourceOf(c.name);
      if (source) out.push(this.view(c, source, now));
    }
    return out;
  }

  get(name: string, now = Date.now()): ChannelView {
    const found = this.list(now).find((c) => c.name === name);
    if (!found) throw adminErrors.notFound(`The channel ${JSON.stringify(name)}`);
    return found;
  }

  get editor(): ChannelEditor {
    return this.d.editor;
  }

  /** After a change in the store: this instance applies it before answering, and tells the others. */
  async applied(name: string): Promise<ChannelView> {
    await this.refreshed();
    return this.get(name);
  }

  /** Runs the channel's health probe now (nothing billable); a channel taken out is put back when it answers. */
  async probe(name: string): Promise<ProbeResult & { channel: string; probe: string; state: ChannelHealthView['state'] }> {
    const channel = this.d.config.channels.find((c) => c.name === name && this.d.channels.sourceOf(name));
    if (!channel) throw adminErrors.notFound(`The channel ${JSON.stringify(name)}`);
    const result = (await this.d.health.probeNow(name)) ?? { ok: false, status: null, message: 'the channel is no longer in force', latency_ms: 0 };
    return { channel: name, probe: probeDescription(channel.type), ...result, state: this.d.health.view(name).state };
  }

  async refreshed(): Promise<void> {
    await this.d.channels.refresh();
    await this.d.changed?.();
  }

  private view(c: ChannelConfig, source: ChannelSource, now: number): ChannelView {
    return {
      name: c.name,
      source,
      type: c.type,
      base_url: maskUrl(c.base_url ?? ''),
      ...(c.api_key ? { api_key: 'set' as const } : {}),
      ...(c.api_secret ? { api_secret: 'set' as const } : {}),
      settings: c.settings ?? {},
      enabled: c.enabled,
      priority: c.priority,
      weight: c.weight,
      models: c.models,
      model_map: c.model_map,
      ...(c.upstream_format ? { upstream_format: c.upstream_format } : {}),
      poll_concurrency: c.poll_concurrency,
      ...(c.allow_private_network !== undefined ? { allow_private_network: c.allow_private_network } : {}),
      problem: source === 'api' ? channelProblem(c, this.d.config.models) : null,
      balance_read: providerFor(c.type)?.balance?.describe(c.settings ?? {}) ?? null,
      ...(c.test_interval_s !== undefined ? { test_interval_s: c.test_interval_s } : {}),
      scheduled_test_s: c.enabled ? (c.test_interval_s ?? this.d.config.relay.health.test_interval_s) : 0,
      breaker: this.d.relay.breaker(c.name).state(now),
      health: this.d.health.view(c.name, now),
      last_5m: this.d.stats.of(c.name, 5, now),
      last_60m: this.d.stats.of(c.name, 60, now),
    };
  }

  /**
   * A minimal real call through the channel: a one-token chat completion when it serves a chat
   * model; otherwise a GET of its base URL with its credentials (any answer but 401/403/5xx is a
   * reachable channel that accepts them). Not counted in the channel's statistics.
   */
  async test(name: string): Promise<ChannelTestResult> {
    const channel = this.d.config.channels.find((c) => c.name === name);
    if (!channel) throw adminErrors.notFound(`The channel ${JSON.stringify(name)}`);
    const chatModel = channel.models.find((m) => this.d.config.models[m]?.kind === 'chat');
    const started = performance.now();
    const ms = () => Math.round(performance.now() - started);
    const signal = AbortSignal.timeout(30_000);
    try {
      if (chatModel) {
        const answer = await new ChatRelay(this.d.upstream).complete(
          { client: 'openai', body: { model: chatModel, messages: [{ role: 'user', content: 'ping' }], max_tokens: 1 }, stream: false, includeUsage: false, signal },
          targetFor(channel, chatModel),
        );
        return { channel: name, ok: true, probe: 'chat completion (max_tokens 1)', model: chatModel, latency_ms: ms(), status: 200, message: `answered (${answer.usage.input ?? 0} input, ${answer.usage.output ?? 0} output tokens)` };
      }
      return await this.reach(channel, ms, signal);
    } catch (err) {
      const f = err instanceof UpstreamFailure ? err : null;
      return { channel: name, ok: false, probe: chatModel ? 'chat completion (max_tokens 1)' : 'GET base URL', model: chatModel ?? null, latency_ms: ms(), status: f?.status ?? null, message: redact(f ? `${f.kind}: ${f.message}` : (err as Error).message) };
    }
  }

  private async reach(channel: ChannelConfig, ms: () => number, signal: AbortSignal): Promise<ChannelTestResult> {
    const target = targetFor(channel, channel.models[0] ?? '');
    const res = await this.d.upstream.send({ url: `${target.baseUrl}/`, method: 'GET', headers: { authorization: `Bearer ${target.apiKey}`, 'x-api-key': target.apiKey }, signal });
    await res.body.dump().catch(() => undefined);
    const ok = res.statusCode < 500 && res.statusCode !== 401 && res.statusCode !== 403;
    return { channel: channel.name, ok, probe: 'GET base URL', model: null, latency_ms: ms(), status: res.statusCode, message: ok ? 'reachable' : res.statusCode === 401 || res.statusCode === 403 ? 'the provider refused the channel\'s credentials' : 'the provider answered with a server error' };
  }
}
