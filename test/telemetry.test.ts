import { afterEach, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from './helpers/gateway.js';
import { startSimulator, type Simulator } from '../src/simulator/server.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './helpers/otlp-receiver.js';
import { createTask, waitForTask } from './helpers/video.js';

// OpenTelemetry end to end: a gateway with telemetry on exports to a real OTLP/HTTP receiver
// (http/protobuf decoded with the OTLP schema, and http/json); the simulator reports the
// traceparent every upstream request carried. Runs on both stores.

const UPSTREAM_KEYS = ['sk-upstream-first-5Qm2Lx9Vb7Tn3Rc', 'sk-upstream-second-8Hy4Kw1Zp6Jd2Fs'];
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_SPAN = '00f067aa0ba902b7';

let gw: TestGateway | null = null;
let sim: Simulator | null = null;
let receiver: OtlpReceiver | null = null;

afterEach(async () => {
  await gw?.close();
  await sim?.close();
  await receiver?.close();
  gw = sim = receiver = null;
});

function telemetry(url: string, protocol: string, extra: Record<string, unknown> = {}) {
  return { enabled: true, endpoint: url, protocol, export_interval_ms: 50, metrics_interval_ms: 200, ...extra };
}

async function chatRig(protocol: string, extra: Record<string, unknown> = {}) {
  receiver = await startOtlpReceiver();
  sim = await startSimulator({ videoSeconds: 0.3 });
  gw = await startGateway({
    telemetry: telemetry(receiver.url, protocol, extra),
    relay: { breaker_failures: 1000 },
    channels: [
      { name: 'first', type: 'openai', base_url: `${sim.url}/v1`, api_key: UPSTREAM_KEYS[0], priority: 0, models: ['dual'] },
      { name: 'second', type: 'openai', base_url: `${sim.url}/v1`, api_key: UPSTREAM_KEYS[1], priority: 1, models: ['dual'] },
    ],
    models: { dual: { kind: 'chat', owned_by: 'test', price: { input_per_million: 1, output_per_million: 2 } } },
  });
  const key = await gw.createKey({ creditMicros: 10_000_000 });
  return { gw, sim, receiver, key };
}

/** Waits (up to 10 s) until a metric export holding `name` reached the receiver. */
async function metricArrived(r: OtlpReceiver, name: string) {
  for (let i = 0; i < 200 && !r.metrics.some((m) => m.name === name); i++) await new Promise((resolve) => setTimeout(resolve, 50));
}

function inTrace(spans: ReceivedSpan[], traceId: string) {
  return spans.filter((s) => s.traceId === traceId);
}

/** No key, upstream credential or secret anywhere in what the receiver got. */
function expectNoSecrets(r: OtlpReceiver, secrets: string[]) {
  expect(r.bodies.length).toBeGreaterThan(0);
  for (const body of r.bodies) for (const secret of secrets) expect(body.includes(secret), `a telemetry body holds ${secret.slice(0, 12)}…`).toBe(false);
}

describe('traces', () => {
  it('continues an incoming traceparent: server span, one client span per attempt (fallback), GenAI attributes, traceparent upstream (http/protobuf)', async () => {
    const { gw: gateway, sim: simulator, receiver: r, key } = await chatRig('http/protobuf');
    await fetch(`${simulator.url}/__sim/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ match: 'openai.chat', count: 1, kind: 'status', status: 500 }) });
    const res = await fetch(`${gateway.url}/v1/chat/completions?key=${key.key}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json', traceparent: `00-${TRACE_ID}-${PARENT_SPAN}-01`, tracestate: 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE' },
      body: JSON.stringify({ model: 'dual', messages: [{ role: 'user', content: 'trace me' }] }),
    });
    expect(res.status).toBe(200);
    await res.json();
    const seen = (await (await fetch(`${simulator.url}/__sim/traceparents`)).json()) as { requests: { route: string; traceparent: string; tracestate?: string }[] };
    gw = null;
    await gateway.close();

    const spans = inTrace(r.spans, TRACE_ID);
    const server = spans.find((s) => s.kind === 2)!;
    expect(server).toBeDefined();
    expect(server.parentSpanId).toBe(PARENT_SPAN);
    expect(server.name).toBe('POST /v1/chat/completions');
    expect(server.serviceName).toBe('mediagate');
    expect(server.attributes).toMatchObject({ 'http.request.method': 'POST', 'http.route': '/v1/chat/completions', 'url.path': '/v1/chat/completions', 'http.response.status_code': 200, 'mediagate.key_id': key.id });

    const attempts = spans.filter((s) => s.kind === 3).sort((a, b) => Number(a.attributes['mediagate.attempt']) - Number(b.attributes['mediagate.attempt']));
    expect(attempts.map((a) => a.attributes['mediagate.channel'])).toEqual(['first', 'second']);
    for (const a of attempts) {
      expect(a.parentSpanId).toBe(server.spanId);
      expect(a.name).toBe('chat dual');
      expect(a.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'openai', 'gen_ai.request.model': 'dual', 'mediagate.key_id': key.id, 'server.address': '127.0.0.1' });
    }
    expect(attempts[0].status.code).toBe(2);
    expect(attempts[1].status.code).not.toBe(2);
    expect(attempts[1].attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
    expect(attempts[1].attributes['gen_ai.usage.output_tokens']).toBeGreaterThan(0);
    expect(attempts[1].attributes['gen_ai.response.model']).toBeTypeOf('string');
    expect(attempts[1].attributes['gen_ai.response.finish_reasons']).toEqual(['stop']);
    expect(attempts[1].attributes['mediagate.cost_usd']).toBeGreaterThan(0);
    expect(spans.filter((s) => s.name === 'credit.hold' && s.parentSpanId === server.spanId)).toHaveLength(1);
    expect(spans.filter((s) => s.name === 'credit.settle' && s.parentSpanId === server.spanId)).toHaveLength(1);

    // The upstream saw both attempts, each with the traceparent of its own attempt span.
    const chats = seen.requests.filter((r) => r.route === 'openai.chat');
    expect(chats.map((r) => r.traceparent)).toEqual(attempts.map((a) => `00-${TRACE_ID}-${a.spanId}-01`));
    // The caller's tracestate went on with both (W3C Trace Context: a participant passes it on).
    expect(chats.map((r) => r.tracestate)).toEqual(['rojo=00f067aa0ba902b7,congo=t61rcWkgMzE', 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE']);

    expectNoSecrets(r, [key.key, ...UPSTREAM_KEYS]);
    expect(gateway.logs.join('').includes(UPSTREAM_KEYS[0])).toBe(false);
  });

  it('exports http/json, a stream gets its first-token event, metrics go out through OTLP too', async () => {
    const { gw: gateway, receiver: r, key } = await chatRig('http/json');
    const res = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'dual', stream: true, messages: [{ role: 'user', content: 'stream me' }] }),
    });
    expect(res.status).toBe(200);
    await res.text();
    await new Promise((resolve) => setTimeout(resolve, 400));
    gw = null;
    await gateway.close();
    const receiver = r;
    expect(receiver.contentTypes.some((t) => t.startsWith('/v1/traces application/json'))).toBe(true);
    const attempt = receiver.spans.find((s) => s.kind === 3)!;
    expect(attempt.events.map((e) => e.name)).toContain('gen_ai.first_token');
    expect(attempt.attributes['gen_ai.usage.output_tokens']).toBeGreaterThan(0);
    // A stream's finish reasons and response model, read from its events.
    expect(attempt.attributes['gen_ai.response.finish_reasons']).toEqual(['stop']);
    expect(attempt.attributes['gen_ai.response.model']).toBeTypeOf('string');
    const server = receiver.spans.find((s) => s.kind === 2)!;
    expect(attempt.traceId).toBe(server.traceId);
    expect(server.parentSpanId).toBe('');

    const names = new Set(receiver.metrics.map((m) => m.name));
    expect(names).toContain('gen_ai.client.operation.duration');
    expect(names).toContain('gen_ai.client.token.usage');
    // The Prometheus registry's own series, through the same export.
    expect(names).toContain('mediagate_http_requests');
    expect(names).toContain('mediagate_http_request_duration_seconds');
    expect(names).toContain('mediagate_credit_charged_usd');
    expect(receiver.metrics.find((m) => m.name === 'mediagate_channel_breaker_state')?.points).toEqual(expect.arrayContaining([{ attributes: { channel: 'first' }, value: 0 }]));
    const tokens = receiver.metrics.filter((m) => m.name === 'gen_ai.client.token.usage').flatMap((m) => m.points);
    expect(tokens.map((p) => p.attributes['gen_ai.token.type']).sort()).toEqual(expect.arrayContaining(['input', 'output']));
    expectNoSecrets(receiver, [key.key, ...UPSTREAM_KEYS]);
  });

  it('a video task is a trace of its own from create to SUCCESS, linked to the request that created it', async () => {
    receiver = await startOtlpReceiver();
    // http/json: the receiver decodes metrics (the poll lag) in JSON only.
    gw = await startGateway({ telemetry: telemetry(receiver.url, 'http/json') });
    const key = await gw.createKey();
    const created = await createTask(gw.url, key.key, { model: 'sim-video', prompt: 'a traced corgi' });
    expect(created.status).toBe(200);
    const taskId = created.body.data.task_id as string;
    await waitForTask(gw.url, key.key, taskId, (r) => r.status === 'SUCCESS');
    await metricArrived(receiver, 'mediagate_video_poll_lag_seconds');
    const gateway = gw;
    gw = null;
    await gateway.close();

    const createSpan = receiver.spans.find((s) => s.kind === 2 && s.attributes['http.route'] === '/v1/video/generations')!;
    expect(createSpan).toBeDefined();
    const root = receiver.spans.find((s) => s.name === 'video_task sim-video')!;
    expect(root.parentSpanId).toBe('');
    expect(root.traceId).not.toBe(createSpan.traceId);
    expect(root.links).toEqual([expect.objectContaining({ traceId: createSpan.traceId })]);
    expect(root.attributes).toMatchObject({ 'mediagate.task_id': taskId, 'gen_ai.operation.name': 'generate_content', 'gen_ai.request.model': 'sim-video', 'mediagate.key_id': key.id });
    const task = inTrace(receiver.spans, root.traceId);
    const polls = task.filter((s) => s.name === 'video_task poll');
    expect(polls.length).toBeGreaterThan(0);
    for (const p of polls) expect(p.parentSpanId).toBe(root.spanId);
    expect(polls.some((p) => p.attributes['mediagate.task.status'] === 'SUCCESS')).toBe(true);
    const end = task.find((s) => s.name === 'video_task SUCCESS')!;
    expect(end.attributes['mediagate.task_id']).toBe(taskId);
    expect(end.startNs).toBeLessThanOrEqual(root.startNs);
    // The task's hold is settled in its trace, with what it cost.
    const settle = task.find((s) => s.name === 'credit.settle')!;
    expect(settle).toBeDefined();
    expect(settle.attributes['mediagate.cost_usd']).toBeGreaterThan(0);
    // The create's attempt span names the task.
    const attempt = inTrace(receiver.spans, createSpan.traceId).find((s) => s.kind === 3)!;
    expect(attempt.attributes).toMatchObject({ 'mediagate.task_id': taskId, 'gen_ai.operation.name': 'generate_content' });
    // The link names the attempt that created the task.
    expect(root.links[0].spanId).toBe(attempt.spanId);
    // How late each poll started against its due time, through OTLP.
    const lag = receiver.metrics.filter((m) => m.name === 'mediagate_video_poll_lag_seconds').flatMap((m) => m.points);
    expect(lag.map((p) => p.attributes.provider)).toContain('simulator');
    expectNoSecrets(receiver, [key.key]);
  });

  it('an unsampled request records no span, yet its upstream request carries a traceparent of its trace with the sampled flag off', async () => {
    // The default sampler is parent-based: a caller that did not sample decides for the request.
    const { gw: gateway, sim: simulator, receiver: r, key } = await chatRig('http/json');
    const res = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json', traceparent: `00-${TRACE_ID}-${PARENT_SPAN}-00`, tracestate: 'rojo=00f067aa0ba902b7' },
      body: JSON.stringify({ model: 'dual', stream: true, messages: [{ role: 'user', content: 'do not trace me' }] }),
    });
    expect(res.status).toBe(200);
    await res.text();
    // A new root trace with a ratio of 0: not sampled either.
    const quiet = await startGateway({
      telemetry: telemetry(r.url, 'http/json', { sampler: 'parentbased_traceidratio', sampler_arg: 0 }),
      channels: [{ name: 'only', type: 'openai', base_url: `${simulator.url}/v1`, api_key: UPSTREAM_KEYS[0], models: ['dual'] }],
      models: { dual: { kind: 'chat', owned_by: 'test' } },
    });
    try {
      const k = await quiet.createKey();
      const res2 = await fetch(`${quiet.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${k.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'dual', messages: [{ role: 'user', content: 'nor me' }] }),
      });
      expect(res2.status).toBe(200);
      await res2.json();
    } finally {
      await quiet.close();
    }
    const seen = (await (await fetch(`${simulator.url}/__sim/traceparents`)).json()) as { requests: { route: string; traceparent: string; tracestate?: string }[] };
    await metricArrived(r, 'gen_ai.client.operation.duration');
    gw = null;
    await gateway.close();

    // The caller's tracestate goes on unsampled too; a request that sent none sends none.
    expect(seen.requests.filter((q) => q.route === 'openai.chat').map((q) => q.tracestate)).toEqual(['rojo=00f067aa0ba902b7', undefined]);
    const chats = seen.requests.filter((q) => q.route === 'openai.chat').map((q) => q.traceparent);
    expect(chats).toHaveLength(2);
    expect(chats[0]).toMatch(new RegExp(`^00-${TRACE_ID}-[0-9a-f]{16}-00$`));
    expect(chats[0]).not.toContain(PARENT_SPAN);
    expect(chats[1]).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
    expect(chats[1]).not.toContain(TRACE_ID);
    // Nothing of either request was exported (metrics still are).
    expect(r.spans).toEqual([]);
    expect(r.metrics.map((m) => m.name)).toContain('gen_ai.client.operation.duration');
  });

  it('a ratio sampler on new traces: a sampled request is exported under the trace id its upstream saw, an unsampled one is not', async () => {
    const { gw: gateway, sim: simulator, receiver: r, key } = await chatRig('http/json', { sampler: 'parentbased_traceidratio', sampler_arg: 0.5 });
    for (let i = 0; i < 24; i++) {
      const res = await fetch(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'dual', messages: [{ role: 'user', content: `request ${i}` }] }),
      });
      expect(res.status).toBe(200);
      await res.json();
    }
    const seen = (await (await fetch(`${simulator.url}/__sim/traceparents`)).json()) as { requests: { route: string; traceparent: string }[] };
    gw = null;
    await gateway.close();

    const upstream = seen.requests.filter((q) => q.route === 'openai.chat').map((q) => /^00-([0-9a-f]{32})-([0-9a-f]{16})-(0[01])$/.exec(q.traceparent));
    expect(upstream).toHaveLength(24);
    const sampledIds = new Set(upstream.filter((m) => m![3] === '01').map((m) => m![1]));
    const unsampledIds = upstream.filter((m) => m![3] === '00').map((m) => m![1]);
    // 24 fair draws: both kinds (all of one kind has a chance of 2 in 16.7 million).
    expect(sampledIds.size).toBeGreaterThan(0);
    expect(unsampledIds.length).toBeGreaterThan(0);
    const servers = r.spans.filter((s) => s.kind === 2);
    // Each sampled request's server span and client span carry the trace id its upstream request did.
    expect(new Set(servers.map((s) => s.traceId))).toEqual(sampledIds);
    for (const m of upstream.filter((x) => x![3] === '01')) {
      expect(r.spans.find((s) => s.kind === 3 && s.spanId === m![2])?.traceId).toBe(m![1]);
    }
    // Each decision is the ratio sampler's for that very trace id (its four 4-byte parts XORed, against the ratio's bound).
    const bound = Math.floor(0.5 * 0xffffffff);
    const accumulate = (id: string) => {
      let acc = 0;
      for (let i = 0; i < 4; i++) acc = (acc ^ parseInt(id.slice(i * 8, i * 8 + 8), 16)) >>> 0;
      return acc;
    };
    for (const id of sampledIds) expect(accumulate(id)).toBeLessThan(bound);
    for (const id of unsampledIds) expect(accumulate(id)).toBeGreaterThanOrEqual(bound);
    for (const id of unsampledIds) expect(r.spans.some((s) => s.traceId === id)).toBe(false);
  });

  it('tracing off: nothing is exported and no traceparent goes upstream', async () => {
    receiver = await startOtlpReceiver();
    sim = await startSimulator({});
    gw = await startGateway({
      telemetry: { enabled: false, endpoint: receiver.url },
      channels: [{ name: 'only', type: 'openai', base_url: `${sim.url}/v1`, api_key: UPSTREAM_KEYS[0], models: ['dual'] }],
      models: { dual: { kind: 'chat', owned_by: 'test' } },
    });
    const key = await gw.createKey();
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'dual', messages: [{ role: 'user', content: 'quiet' }] }),
    });
    expect(res.status).toBe(200);
    const seen = (await (await fetch(`${sim.url}/__sim/traceparents`)).json()) as { requests: unknown[] };
    await gw.close();
    gw = null;
    expect(seen.requests).toEqual([]);
    expect(receiver.bodies).toEqual([]);
  });
});
