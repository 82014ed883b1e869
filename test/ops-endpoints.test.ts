import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from './helpers/gateway.js';

describe('operations endpoints', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(async () => gw.close());

  it('serves an OpenAPI document describing every public route', async () => {
    const res = await fetch(`${gw.url}/openapi.json`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { openapi: string; paths: Record<string, Record<string, unknown>> };
    expect(doc.openapi).toMatch(/^3\./);
    for (const [path, method] of [
      ['/v1/models', 'get'],
      ['/v1/chat/completions', 'post'],
      ['/v1/messages', 'post'],
      ['/v1/images/generations', 'post'],
      ['/v1/images/edits', 'post'],
      ['/v1/video/generations', 'post'],
      ['/v1/video/generations/{task_id}', 'get'],
      ['/healthz', 'get'],
      ['/readyz', 'get'],
    ]) {
      expect(doc.paths[path]?.[method], `${method} ${path}`).toBeDefined();
    }
    const models = doc.paths['/v1/models'].get as any;
    expect(Object.keys(models.responses['200'].content['application/json'].schema.properties).sort()).toEqual(['data', 'object', 'success']);
  });

  it('documents Idempotency-Key, its 400/409/422 and the replay header on exactly the routes that take it', async () => {
    const doc = (await (await fetch(`${gw.url}/openapi.json`)).json()) as any;
    expect(doc.components.parameters.IdempotencyKey).toMatchObject({ name: 'Idempotency-Key', in: 'header', required: false, schema: { maxLength: 255 } });
    const documented: string[] = [];
    const others: string[] = [];
    for (const [path, ops] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(ops)) {
        if (method !== 'post') continue;
        const has = op.parameters.some((p: any) => p.$ref === '#/components/parameters/IdempotencyKey');
        (has ? documented : others).push(path);
        if (!has) continue;
        expect(op.responses['400'].description, path).toContain('invalid_idempotency_key');
        expect(op.responses['409'].description, path).toContain('idempotency_in_progress');
        expect(op.responses['422'].description, path).toContain('idempotency_key_reused');
        const ok = Object.entries<any>(op.responses).filter(([status]) => status.startsWith('2'));
        expect(ok.length, path).toBeGreaterThan(0);
        for (const [, answer] of ok) expect(answer.headers['Idempotent-Replayed'], path).toBeDefined();
      }
    }
    expect(documented.sort()).toEqual(['/v1/chat/completions', '/v1/images/edits', '/v1/images/generations', '/v1/messages', '/v1/responses', '/v1/video/generations', '/v1/videos', '/v1beta/models/{path}'].sort());
    // What the document says is what the routes do: a bad key is refused where it is documented, ignored elsewhere.
    const { key } = await gw.createKey();
    const bad = { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': 'x'.repeat(256) };
    for (const path of documented) {
      const url = path === '/v1beta/models/{path}' ? '/v1beta/models/sim-chat:generateContent' : path;
      const res = await fetch(`${gw.url}${url}`, { method: 'POST', headers: bad, body: '{}' });
      expect(res.status, path).toBe(400);
      // Each family's error shape; every one names the header's rule.
      expect(await res.text(), path).toContain('The Idempotency-Key header must be 1 to 255 printable ASCII characters');
    }
    for (const path of others.filter((p) => p.startsWith('/v1/messages/count_tokens'))) {
      const res = await fetch(`${gw.url}${path}`, { method: 'POST', headers: bad, body: JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }] }) });
      expect(await res.text(), path).not.toContain('Idempotency-Key');
    }
    expect(others).toContain('/v1/messages/count_tokens');
  });

  it('exposes Prometheus metrics counting requests by route pattern and status', async () => {
    const { key } = await gw.createKey();
    await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
    await fetch(`${gw.url}/v1/models`);
    await fetch(`${gw.url}/v1/video/generations/cgt-unknown-1`, { headers: { authorization: `Bearer ${key}` } });
    const res = await fetch(`${gw.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/plain/);
    const text = await res.text();
    expect(text).toMatch(/mediagate_http_requests_total\{route="\/v1\/models",method="GET",status="200"\} [1-9]/);
    expect(text).toMatch(/mediagate_http_requests_total\{route="\/v1\/models",method="GET",status="401"\} [1-9]/);
    // The route pattern, never the raw id, so label values stay bounded.
    expect(text).toContain('route="/v1/video/generations/:task_id"');
    expect(text).not.toContain('cgt-unknown-1');
    expect(text).toContain('mediagate_process_resident_memory_bytes');
  });

  it('counts failed upstream attempts by channel and kind', async () => {
    const { key } = await gw.createKey();
    await fetch(`${gw.services.simulator!.url}/__sim/faults`, { method: 'POST', body: JSON.stringify({ match: 'openai.chat', kind: 'status', status: 500, count: 1 }) });
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(502);
    const text = await (await fetch(`${gw.url}/metrics`)).text();
    expect(text).toMatch(/mediagate_upstream_failures_total\{channel="simulator",kind="status"\} 1/);
  });
});

describe('abandoned credit holds', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(async () => gw.close());

  it('releases an old hold with no task and leaves fresh holds and task holds alone', async () => {
    const { id } = await gw.createKey({ creditMicros: 1_000_000 });
    const repo = gw.services.reservations;
    const now = Date.now();
    const old = await repo.reserve(id, 100_000, now - 2 * 3600_000);
    const fresh = await repo.reserve(id, 50_000, now);
    const forTask = await repo.reserve(id, 25_000, now - 2 * 3600_000);
    await gw.services.store.db
      .insertInto('tasks')
      .values({
        task_id: 'cgt-20250101000000-abcde', upstream_id: 'cgt-20250101000000-abcde', billing: '', key_id: id, model: 'sim-video', channel: 'simulator', upstream_model: 'sim-video',
        action: 'textGenerate', status: 'IN_PROGRESS', fail_reason: '', submit_time: 1, start_time: 1, finish_time: 0, progress: '10%',
        data: '{}', reservation_id: forTask, estimated_units: 1, next_poll_at: now + 3600_000, lease_owner: null, lease_until: 0,
        poll_failures: 0, deadline_at: now + 3600_000, url_expires_at: 0, updated_at: now,
      })
      .execute();
    expect(await repo.balance(id)).toBe(825_000);
    const released = await gw.services.credit.releaseAbandoned(3600_000, now);
    expect(released).toBe(1);
    expect(await repo.balance(id)).toBe(925_000);
    const states = await gw.services.store.db.selectFrom('reservations').select(['id', 'state']).where('key_id', '=', id).execute();
    expect(Object.fromEntries(states.map((r) => [r.id, r.state]))).toEqual({ [old!]: 'released', [fresh!]: 'held', [forTask!]: 'held' });
    // A second sweep finds nothing: each hold is released once.
    expect(await gw.services.credit.releaseAbandoned(3600_000, now)).toBe(0);
    expect(await repo.balance(id)).toBe(925_000);
  });
});
