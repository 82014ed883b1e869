// Each channel's health from real traffic: upstream attempts and their failures over a sliding
// window (this instance's, plus the other instances' when they share theirs through Redis). A
// channel whose error rate reaches `error_rate` over at least `min_requests` attempts is taken out
// of rotation, probed with a request that costs nothing (a model list, or its base URL) on a
// doubling backoff, and put back when a probe answers. Failures caused by the request (a 4xx the
// provider judged the client's, a client gone, a refusal before any upstream call) and a busy
// provider (429) never count against a channel.

export interface HealthSettings {
  enabled: boolean;
  window_s: number;
  min_requests: number;
  error_rate: number;
  probe_initial_ms: number;
  probe_max_ms: number;
  /** Seconds between scheduled tests of a channel that sets no test_interval_s of its own; 0 = none. */
  test_interval_s: number;
}

/** How an upstream attempt ended, for the channel's health. */
export type AttemptOutcome = 'ok' | 'error' | 'not_counted';

export interface ProbeResult {
  ok: boolean;
  status: number | null;
  message: string;
  latency_ms: number;
}

/** Probes a channel by name; null when the channel is no longer in force (probing stops). */
export type Prober = (channel: string) => Promise<ProbeResult | null>;

export interface Counts {
  requests: number;
  errors: number;
}

export interface ChannelHealthView {
  /** `in_rotation`, or `out` while taken out by its health (probed until it answers). */
  state: 'in_rotation' | 'out';
  window_s: number;
  /** This instance's attempts over the window. */
  instance: Counts & { error_rate: number };
  /** Every instance's, summed (equals `instance` without Redis). */
  cluster: Counts & { error_rate: number };
  last_error: { at: string; message: string } | null;
  out_since: string | null;
  next_probe_at: string | null;
  last_probe: (ProbeResult & { at: string }) | null;
}

const BUCKETS = 30;

class Window {
  private readonly starts = new Float64Array(BUCKETS).fill(-1);
  private readonly requests = new Uint32Array(BUCKETS);
  private readonly errors = new Uint32Array(BUCKETS);

  constructor(private readonly bucketMs: number) {}

  add(error: boolean, now: number): void {
    const n = Math.floor(now / this.bucketMs);
    const i = n % BUCKETS;
    if (this.starts[i] !== n) {
      this.starts[i] = n;
      this.requests[i] = 0;
      this.errors[i] = 0;
    }
    this.requests[i]++;
    if (error) this.errors[i]++;
  }

  totals(now: number): Counts {
    const current = Math.floor(now / this.bucketMs);
    let requests = 0;
    let errors = 0;
    for (let i = 0; i < BUCKETS; i++) {
      if (this.starts[i] < 0 || this.starts[i] <= current - BUCKETS) continue;
      requests += this.requests[i];
      errors += this.errors[i];
    }
    return { requests, errors };
  }

  clear(): void {
    this.starts.fill(-1);
  }
}

interface State {
  window: Window;
  out: boolean;
  outSince: number;
  lastError: { at: number; message: string } | null;
  delay: number;
  timer: NodeJS.Timeout | null;
  nextProbeAt: number;
  lastProbe: (ProbeResult & { at: number }) | null;
}

const rate = (c: Counts) => ({ ...c, error_rate: c.requests ? c.errors / c.requests : 0 });

export class ChannelHealth {
  private readonly states = new Map<string, State>();
  private prober: Prober | null = null;
  /** The other instances' counts per channel (set by the cluster's share; empty without Redis). */
  private peers = new Map<string, Counts>();
  private closed = false;
  private testTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly settings: HealthSettings,
    /** The structured channel log (relay/channel-log.ts). */
    private readonly log: (level: 'info' | 'warn', event: string, fields: Record<string, unknown>) => void = () => undefined,
  ) {}

  setProber(prober: Prober): void {
    this.prober = prober;
  }

  /** Whether a new request may go to the channel. */
  inRotation(channel: string): boolean {
    return !this.states.get(channel)?.out;
  }

  /** One upstream attempt through the channel. */
  record(channel: string, outcome: AttemptOutcome, errorMessage = '', now = Date.now()): void {
    if (outcome === 'not_counted') return;
    const s = this.state(channel);
    s.window.add(outcome === 'error', now);
    if (outcome !== 'error') return;
    s.lastError = { at: now, message: errorMessage.slice(0, 500) };
    if (!s.out) this.judge(channel, s, now);
  }

  /** This instance's counts of every channel seen (what the cluster share publishes). */
  localCounts(now = Date.now()): Record<string, Counts> {
    const out: Record<string, Counts> = {};
    for (const [name, s] of this.states) {
      const c = s.window.totals(now);
      if (c.requests) out[name] = c;
    }
    return out;
  }

  /** The other instances' counts; a channel failing across the cluster is taken out here too. */
  setPeers(peers: Map<string, Counts>, now = Date.now()): void {
    this.peers = peers;
    for (const name of peers.keys()) {
      const s = this.state(name);
      if (!s.out) this.judge(name, s, now);
    }
  }

  view(channel: string, now = Date.now()): ChannelHealthView {
    const s = this.states.get(channel);
    const local = s ? s.window.totals(now) : { requests: 0, errors: 0 };
    const peer = this.peers.get(channel) ?? { requests: 0, errors: 0 };
    const iso = (t: number) => new Date(t).toISOString();
    return {
      state: s?.out ? 'out' : 'in_rotation',
      window_s: this.settings.window_s,
      instance: rate(local),
      cluster: rate({ requests: local.requests + peer.requests, errors: local.errors + peer.errors }),
      last_error: s?.lastError ? { at: iso(s.lastError.at), message: s.lastError.message } : null,
      out_since: s?.out ? iso(s.outSince) : null,
      next_probe_at: s?.out && s.nextProbeAt ? iso(s.nextProbeAt) : null,
      last_probe: s?.lastProbe ? { ...s.lastProbe, at: iso(s.lastProbe.at) } : null,
    };
  }

  /** Runs the channel's probe now (the console's Test button); a success puts a channel taken out back. */
  async probeNow(channel: string): Promise<ProbeResult | null> {
    if (!this.prober) return null;
    const result = await this.prober(channel);
    if (!result) return null;
    const s = this.state(channel);
    s.lastProbe = { ...result, at: Date.now() };
    if (result.ok && s.out) this.putBack(channel, s);
    return result;
  }

  /**
   * Scheduled tests: every channel `channels` gives with an interval above 0 (its own
   * `test_interval_s`, else relay.health.test_interval_s) that is in rotation is probed once per
   * interval; the result shows as its last probe and counts as one attempt in its window. Checked
   * every second, so a changed interval applies without a restart.
   */
  startScheduledTests(channels: () => { name: string; interval_s: number }[], tickMs = 1000): void {
    const last = new Map<string, number>();
    this.testTimer = setInterval(() => {
      const now = Date.now();
      const seen = new Set<string>();
      for (const { name, interval_s } of channels()) {
        seen.add(name);
        if (!interval_s) {
          last.delete(name);
          continue;
        }
        // The first test comes one interval after the channel is seen with one.
        const since = last.get(name);
        if (since === undefined) last.set(name, now);
        if (since === undefined || now - since < interval_s * 1000) continue;
        last.set(name, now);
        if (!this.inRotation(name) || !this.prober) continue;
        void this.prober(name)
          .then((result) => {
            if (!result || this.closed) return;
            this.state(name).lastProbe = { ...result, at: Date.now() };
            this.record(name, result.ok ? 'ok' : 'error', result.ok ? '' : `scheduled test: ${result.message}`);
            if (!result.ok) this.log('warn', 'scheduled channel test failed', { channel: name, status: result.status, message: result.message });
          })
          .catch(() => undefined);
      }
      for (const name of last.keys()) if (!seen.has(name)) last.delete(name);
    }, tickMs);
    this.testTimer.unref();
  }

  close(): void {
    this.closed = true;
    if (this.testTimer) clearInterval(this.testTimer);
    for (const s of this.states.values()) if (s.timer) clearTimeout(s.timer);
  }

  private state(channel: string): State {
    let s = this.states.get(channel);
    if (!s) {
      s = { window: new Window(Math.max(1, Math.round((this.settings.window_s * 1000) / BUCKETS))), out: false, outSince: 0, lastError: null, delay: 0, timer: null, nextProbeAt: 0, lastProbe: null };
      this.states.set(channel, s);
    }
    return s;
  }

  private judge(channel: string, s: State, now: number): void {
    if (!this.settings.enabled) return;
    const local = s.window.totals(now);
    const peer = this.peers.get(channel) ?? { requests: 0, errors: 0 };
    const requests = local.requests + peer.requests;
    const errors = local.errors + peer.errors;
    if (requests < this.settings.min_requests || errors / requests < this.settings.error_rate) return;
    s.out = true;
    s.outSince = now;
    s.delay = this.settings.probe_initial_ms;
    this.log('warn', 'channel taken out of rotation', { channel, requests, errors, error_rate: Number((errors / requests).toFixed(3)), last_error: s.lastError?.message ?? '' });
    this.schedule(channel, s);
  }

  private schedule(channel: string, s: State): void {
    if (this.closed) return;
    s.nextProbeAt = Date.now() + s.delay;
    s.timer = setTimeout(() => void this.probe(channel, s), s.delay);
    s.timer.unref();
  }

  private async probe(channel: string, s: State): Promise<void> {
    s.timer = null;
    if (!s.out || this.closed) return;
    let result: ProbeResult | null;
    try {
      result = this.prober ? await this.prober(channel) : null;
    } catch (err) {
      result = { ok: false, status: null, message: (err as Error).message, latency_ms: 0 };
    }
    if (!s.out || this.closed) return;
    if (result === null) {
      // The channel is gone (removed, or no longer in the config): nothing to put back.
      this.states.delete(channel);
      return;
    }
    s.lastProbe = { ...result, at: Date.now() };
    if (result.ok) return this.putBack(channel, s);
    s.delay = Math.min(s.delay * 2, this.settings.probe_max_ms);
    this.schedule(channel, s);
  }

  private putBack(channel: string, s: State): void {
    if (s.timer) clearTimeout(s.timer);
    s.timer = null;
    s.out = false;
    s.nextProbeAt = 0;
    // The failures that took it out are history: it starts a fresh window (the others' too, as
    // they clear theirs when their own probe answers).
    s.window.clear();
    this.peers.delete(channel);
    this.log('info', 'channel back in rotation', { channel, out_for_ms: Date.now() - s.outSince });
  }
}
