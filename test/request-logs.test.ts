import { afterEach, describe, expect, it } from 'vitest';
import { startAdminGateway, type AdminGateway } from './helpers/admin.js';
import { startOtlpReceiver, type OtlpReceiver } from './helpers/otlp-receiver.js';
import { RequestLogsRepo } from '../src/store/repos/request-logs.js';

// Request logs: metadata of every model request, bodies (scrubbed, images as references) only for
// the keys and models the config names, searchable by trace id in the admin API, kept for
// request_logs.retention_days. Runs on both stores.

let gw: AdminGateway | null = null;
let receiver: OtlpReceiver | null = null;
afterEach(async () => {
  await gw?.close();
  await receiver?.close();
  gw = null;
  receiver = null;
});

const TRACE_A = 'aaaa2f3577b34da6a3ce929d0e0e4736';
const TRACE_B = 'bbbb2f3577b34da6a3ce929d0e0e4736';

async function chat(g: AdminGateway, key: string, content: string, headers: Record<string, string> = {}, extra: Record<string, unknown> = {}) {
  const res = await fetch(`${g.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content }], ...extra }),
  });
  await res.text();
  return res.status;
}

/** The rows a query finds, waiting for them to be written (a row goes in after the response closed). */
async function logsWhen(g: AdminGateway, query: string, count: number) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const res = await g.api('GET', `/admin/api/request-logs${query}`);
    expect(res.status).toBe(200);
    if (res.body.data.length >= count || Date.now() > deadline) return res.body.data as any[];
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('request logs', () => {
  it('stores one key’s bodies scrubbed and found by trace id; another key’s metadata only', async () => {
    gw = await startAdminGateway({ request_logs: { enabled: true, max_body_bytes: 2048 } });
    const a = await gw.createKey({ creditMicros: 5_000_000 });
    const b = await gw.createKey();
    // As a config reload would: bodies for key a only.
    gw.config.request_logs.body_keys = [a.id];

    expect(await chat(gw, a.key, `remember ${a.key} and the admin token ${gw.token}`, { traceparent: `00-${TRACE_A}-00f067aa0ba902b7-01` })).toBe(200);
    expect(await chat(gw, b.key, 'not stored', { traceparent: `00-${TRACE_B}-00f067aa0ba902b7-01` })).toBe(200);

    const [rowA] = await logsWhen(gw, `?trace_id=${TRACE_A}`, 1);
    expect(rowA).toMatchObject({ trace_id: TRACE_A, key_id: a.id, model: 'sim-chat', channel: 'simulator', endpoint: 'chat', route: '/v1/chat/completions', status: 200 });
    expect(rowA.input_units).toBeGreaterThan(0);
    expect(rowA.output_units).toBeGreaterThan(0);
    expect(Number(rowA.cost_usd)).toBeGreaterThan(0);
    expect(rowA.request_body).toContain('remember');
    expect(rowA.request_body).not.toContain(a.key);
    expect(rowA.request_body).not.toContain(gw.token);
    expect(rowA.response_body).toContain('You said');
    expect(rowA.response_body).not.toContain(a.key);

    const [rowB] = await logsWhen(gw, `?trace_id=${TRACE_B}`, 1);
    expect(rowB).toMatchObject({ key_id: b.id, status: 200, request_body: '', response_body: '' });

    // The key filter, and the CSV export.
    expect((await logsWhen(gw, `?key=${b.id}`, 1)).map((r) => r.trace_id)).toEqual([TRACE_B]);
    const csv = await gw.api('GET', `/admin/api/request-logs?format=csv&key=${a.id}`);
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toContain('text/csv');
    expect(String(csv.body).split('\n')[0]).toBe('id,created_at,trace_id,key_id,model,channel,endpoint,route,status,latency_ms,input_units,output_units,cost_usd,request_body,response_body');
    expect(String(csv.body)).toContain(TRACE_A);
    expect(String(csv.body)).not.toContain(a.key);

    const bad = await gw.api('GET', '/admin/api/request-logs?trace_id=nothex');
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('trace_id');
  });

  it('logs refusals and streams, stores images as references, and drops rows past the retention', async () => {
    gw = await startAdminGateway({ request_logs: { enabled: true, body_models: ['sim-image', 'sim-chat'], retention_days: 2 } });
    const k = await gw.createKey();
    expect(await chat(gw, k.key, 'stream it', {}, { stream: true })).toBe(200);
    const refused = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${k.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(refused.status).toBe(404);
    const image = await fetch(`${gw.url}/v1/images/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${k.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sim-image', prompt: 'a lighthouse', response_format: 'b64_json' }),
    });
    expect(image.status).toBe(200);
    const b64 = ((await image.json()) as { data: { b64_json: string }[] }).data[0].b64_json;

    const rows = await logsWhen(gw, `?key=${k.id}`, 3);
    const byModel = Object.fromEntries(rows.map((r) => [r.model, r]));
    expect(byModel['sim-chat']).toMatchObject({ status: 200, response_body: '[stream]' });
    expect(byModel['sim-chat'].request_body).toContain('stream it');
    expect(byModel['no-such-model']).toMatchObject({ status: 404 });
    expect(byModel['sim-image'].response_body).toMatch(/\[image \d+ bytes\]/);
    expect(byModel['sim-image'].response_body).not.toContain(b64.slice(0, 64));
    expect((await logsWhen(gw, '?status=4xx', 1)).map((r) => r.model)).toEqual(['no-such-model']);

    // Retention: a row older than retention_days goes, the fresh ones stay.
    await new RequestLogsRepo(gw.services.store.db).insert({
      created_at: Date.now() - 3 * 86_400_000, trace_id: 'c'.repeat(32), key_id: k.id, model: 'old', channel: '', endpoint: 'chat', route: '', status: 200, latency_ms: 1, input_units: 0, output_units: 0, cost_micros: 0, request_body: '', response_body: '',
    });
    expect(await logsWhen(gw, `?key=${k.id}`, 4)).toHaveLength(4);
    expect(await gw.services.requestLogs.sweep()).toBe(1);
    expect((await logsWhen(gw, `?key=${k.id}`, 3)).map((r) => r.model).sort()).toEqual(['no-such-model', 'sim-chat', 'sim-image']);
  });

  it('uses the server span’s trace id when tracing is on', async () => {
    receiver = await startOtlpReceiver();
    gw = await startAdminGateway({ request_logs: { enabled: true }, telemetry: { enabled: true, endpoint: receiver.url, protocol: 'http/json', export_interval_ms: 50, metrics: false } });
    const k = await gw.createKey();
    expect(await chat(gw, k.key, 'traced')).toBe(200);
    const [row] = await logsWhen(gw, `?key=${k.id}`, 1);
    const g = gw;
    gw = null;
    await g.close();
    const server = receiver.spans.find((s) => s.kind === 2 && s.attributes['http.route'] === '/v1/chat/completions')!;
    expect(row.trace_id).toBe(server.traceId);
  });

  it('writes nothing while off', async () => {
    gw = await startAdminGateway();
    const k = await gw.createKey();
    expect(await chat(gw, k.key, 'quiet')).toBe(200);
    await new Promise((r) => setTimeout(r, 200));
    expect((await gw.api('GET', '/admin/api/request-logs')).body.data).toEqual([]);
  });
});
