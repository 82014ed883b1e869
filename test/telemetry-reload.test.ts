import { afterEach, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from './helpers/gateway.js';
import { startOtlpReceiver, type OtlpReceiver } from './helpers/otlp-receiver.js';
import { validateConfig } from '../src/config-file/loader.js';
import type { Config } from '../src/config/schema.js';
import { ConfigReloader, type ReloadLog } from '../src/cluster/reload.js';

// A config reload that changes the `telemetry` section restarts the SDK: tracing turned on and off,
// and the sampler changed, in a running gateway (spans exported to a real OTLP receiver).

let gw: TestGateway | null = null;
let receiver: OtlpReceiver | null = null;

afterEach(async () => {
  await gw?.close();
  await receiver?.close();
  gw = receiver = null;
});

const log: ReloadLog = { info: () => undefined, warn: () => undefined };

function nextConfig(gateway: TestGateway, telemetry: Record<string, unknown>): Config {
  const raw = structuredClone(gateway.config) as any;
  for (const ch of raw.channels) if (ch.type === 'simulator') delete ch.base_url;
  raw.telemetry = telemetry;
  return validateConfig(raw, 'reloaded config');
}

/** A chat request starting a new trace (no traceparent); its answer's status. */
async function chat(gateway: TestGateway, key: string): Promise<number> {
  const res = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }] }),
  });
  await res.arrayBuffer();
  return res.status;
}

const serverSpans = (r: OtlpReceiver) => r.spans.filter((s) => s.kind === 2 && s.name === 'POST /v1/chat/completions');
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function spansArrived(r: OtlpReceiver, count: number) {
  for (let i = 0; i < 200 && serverSpans(r).length < count; i++) await pause(50);
}

describe('telemetry on a config reload', () => {
  it('turns tracing on, changes its sampler and turns it off without a restart', async () => {
    receiver = await startOtlpReceiver();
    gw = await startGateway();
    const key = (await gw.createKey({ creditMicros: 10_000_000 })).key;
    const on = { enabled: true, endpoint: receiver.url, export_interval_ms: 50, metrics: false, sampler: 'always_on' };
    let next = nextConfig(gw, on);
    const reloader = new ConfigReloader(gw.services, () => next, log);

    // Off at start: nothing is exported.
    expect(await chat(gw, key)).toBe(200);
    await pause(300);
    expect(receiver.spans).toHaveLength(0);

    let report = await reloader.reload('test');
    expect(report).toMatchObject({ ok: true, needs_restart: [] });
    expect(gw.config.telemetry.enabled).toBe(true);
    for (let i = 0; i < 3; i++) expect(await chat(gw, key)).toBe(200);
    await spansArrived(receiver, 3);
    expect(serverSpans(receiver)).toHaveLength(3);

    // Sampling nothing: requests are served, no span leaves.
    next = nextConfig(gw, { ...on, sampler: 'always_off' });
    expect((await reloader.reload('test')).ok).toBe(true);
    for (let i = 0; i < 3; i++) expect(await chat(gw, key)).toBe(200);
    await pause(400);
    expect(serverSpans(receiver)).toHaveLength(3);

    // Every request sampled again, then telemetry off.
    next = nextConfig(gw, on);
    expect((await reloader.reload('test')).ok).toBe(true);
    expect(await chat(gw, key)).toBe(200);
    await spansArrived(receiver, 4);
    expect(serverSpans(receiver)).toHaveLength(4);

    next = nextConfig(gw, { ...on, enabled: false });
    report = await reloader.reload('test');
    expect(report.ok).toBe(true);
    expect(gw.config.telemetry.enabled).toBe(false);
    for (let i = 0; i < 3; i++) expect(await chat(gw, key)).toBe(200);
    await pause(400);
    expect(serverSpans(receiver)).toHaveLength(4);
  });
});
