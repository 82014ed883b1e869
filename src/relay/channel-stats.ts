// What operators see of each channel in the admin API: requests, errors and latency over the last
// 5 and 60 minutes, per process. Kept in memory, one slot per minute; latencies go into log-spaced
// bins (each 15% wider than the last), so a percentile is exact to within that width.

const MINUTES = 60;
const RATIO = 1.15;
const BINS = 100; // covers up to ~1.15^100 ms ≈ 20 minutes; longer lands in the last bin

interface Slot {
  minute: number;
  requests: number;
  errors: number;
  bins: Uint32Array;
}

export interface WindowStats {
  requests: number;
  errors: number;
  error_rate: number;
  p50_ms: number | null;
  p99_ms: number | null;
}

function binOf(ms: number): number {
  return Math.min(BINS - 1, Math.max(0, Math.ceil(Math.log(Math.max(1, ms)) / Math.log(RATIO))));
}

/** The upper edge of a bin, in whole milliseconds. */
function binValue(bin: number): number {
  return Math.round(Math.pow(RATIO, bin));
}

class ChannelWindow {
  private readonly slots: Slot[] = Array.from({ length: MINUTES }, () => ({ minute: -1, requests: 0, errors: 0, bins: new Uint32Array(BINS) }));

  record(ok: boolean, ms: number, now: number): void {
    const minute = Math.floor(now / 60_000);
    const slot = this.slots[minute % MINUTES];
    if (slot.minute !== minute) {
      slot.minute = minute;
      slot.requests = 0;
      slot.errors = 0;
      slot.bins.fill(0);
    }
    slot.requests++;
    if (!ok) slot.errors++;
    slot.bins[binOf(ms)]++;
  }

  over(minutes: number, now: number): WindowStats {
    const current = Math.floor(now / 60_000);
    const bins = new Uint32Array(BINS);
    let requests = 0;
    let errors = 0;
    for (const s of this.slots) {
      if (s.minute < 0 || s.minute <= current - minutes || s.minute > current) continue;
      requests += s.requests;
      errors += s.errors;
      for (let i = 0; i < BINS; i++) bins[i] += s.bins[i];
    }
    const pct = (q: number): number | null => {
      if (!requests) return null;
      const rank = Math.ceil(q * requests);
      let seen = 0;
      for (let i = 0; i < BINS; i++) {
        seen += bins[i];
        if (seen >= rank) return binValue(i);
      }
      return binValue(BINS - 1);
    };
    return { requests, errors, error_rate: requests ? errors / requests : 0, p50_ms: pct(0.5), p99_ms: pct(0.99) };
  }
}

export class ChannelStats {
  private readonly channels = new Map<string, ChannelWindow>();

  /** One upstream attempt through `channel`: whether it succeeded and how long it took. */
  record(channel: string, ok: boolean, ms: number, now = Date.now()): void {
    let w = this.channels.get(channel);
    if (!w) {
      w = new ChannelWindow();
      this.channels.set(channel, w);
    }
    w.record(ok, ms, now);
  }

  of(channel: string, minutes: number, now = Date.now()): WindowStats {
    return this.channels.get(channel)?.over(minutes, now) ?? { requests: 0, errors: 0, error_rate: 0, p50_ms: null, p99_ms: null };
  }
}
