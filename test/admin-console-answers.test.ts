import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminGateway, type AdminGateway } from './helpers/admin.js';
import { createTask, waitForTask } from './helpers/video.js';

// What the console asks the admin API: key search taken literally (no SQL wildcards), name or id
// prefix; spend to date and last use per key; credit amounts refused with a message that states the
// rule; spend series per key and model over any range.

describe('admin API: the console answers', () => {
  let gw: AdminGateway;
  const HOUR = 3_600_000;
  // A fixed range in the past, on whole hours, so the buckets are known.
  const base = Math.floor((Date.now() - 30 * 86_400_000) / 86_400_000) * 86_400_000;
  let a: { id: string; key: string };
  let b: { id: string; key: string };

  beforeAll(async () => {
    gw = await startAdminGateway();
    a = await gw.createKey({ name: 'series_a' });
    b = await gw.createKey({ name: 'series%b' });
    const row = (key_id: string, model: string, cost_micros: number, created_at: number) => ({
      key_id,
      model,
      channel: 'simulator',
      endpoint: '/v1/chat/completions',
      status: 200,
      input_units: 1,
      output_units: 1,
      cost_micros,
      latency_ms: 20,
      created_at,
    });
    await gw.services.usage.insertMany([
      row(a.id, 'sim-chat', 1_000_000, base + 10 * 60_000),
      row(a.id, 'sim-chat', 500_000, base + 20 * 60_000),
      row(a.id, 'sim-image', 2_000_000, base + HOUR + 5 * 60_000),
      row(b.id, 'sim-chat', 250_000, base + 2 * HOUR + 1),
      // Outside the asked range.
      row(b.id, 'sim-chat', 9_000_000, base + 5 * HOUR),
    ]);
  });
  afterAll(async () => gw?.close());

  const names = async (q: string) => ((await gw.api('GET', `/admin/api/keys?limit=1000&q=${encodeURIComponent(q)}`)).body.data as { name: string }[]).map((k) => k.name).sort();

  it('takes _ and % in the key search literally', async () => {
    await gw.createKey({ name: 'seriesXa' });
    expect(await names('series_')).toEqual(['series_a']);
    expect(await names('%')).toEqual(['series%b']);
    expect(await names('_')).toEqual(['series_a']);
    expect(await names('SERIES_A')).toEqual(['series_a']);
    expect(await names('\\')).toEqual([]);
  });

  it('finds a key by the start of its id', async () => {
    const found = (await gw.api('GET', `/admin/api/keys?q=${encodeURIComponent(a.id.slice(0, 10))}`)).body.data;
    expect(found.map((k: { id: string }) => k.id)).toContain(a.id);
    expect((await gw.api('GET', `/admin/api/keys?q=${encodeURIComponent(a.id.slice(1, 10))}`)).body.data.map((k: { id: string }) => k.id)).not.toContain(a.id);
  });

  it('lists each key with its spend to date, last use and creation time', async () => {
    const one = (await gw.api('GET', `/admin/api/keys?q=${a.id}`)).body.data[0];
    expect(one).toMatchObject({ id: a.id, spent_usd: '3.500000', last_used_at: new Date(base + HOUR + 5 * 60_000).toISOString(), created_at: expect.any(String) });
    const unused = await gw.createKey({ name: 'never-used' });
    expect((await gw.api('GET', `/admin/api/keys?q=${unused.id}`)).body.data[0]).toMatchObject({ spent_usd: '0.000000', last_used_at: null });
  });

  it('refuses a credit amount without a sign, or beyond the maximum, saying what is allowed', async () => {
    const wallet = (await gw.api('POST', '/admin/api/keys', { name: 'wallet', credit_usd: '1' })).body.id;
    for (const usd of ['10', '+99999999999999', '+1000000000.000001', '+1.1234567', '++1', '']) {
      const res = await gw.api('POST', `/admin/api/keys/${wallet}/credit`, { usd });
      expect(res.status, usd).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
      expect(res.body.error.message).toBe('usd must be a string: "+" to add or "-" to take away, then an amount of USD up to 1000000000 with at most 6 decimals (e.g. "+10", "-2.5")');
    }
    expect((await gw.api('POST', `/admin/api/keys/${wallet}/credit`, { usd: '+1000000000' })).body.credit_usd).toBe('1000000001.000000');
    expect((await gw.api('POST', `/admin/api/keys/${wallet}/credit`, { usd: '-1000000000' })).body.credit_usd).toBe('1.000000');
    const big = await gw.api('POST', '/admin/api/keys', { name: 'too-rich', credit_usd: '1000000001' });
    expect(big.status).toBe(400);
    expect(big.body.error.message).toBe('credit_usd must be an amount of USD from 0 to 1000000000 with at most 6 decimals (e.g. "10")');
  });

  it('answers spend per model per hour over a range, oldest bucket first', async () => {
    const res = await gw.api('GET', `/admin/api/usage/series?group=model&bucket=hour&from=${base}&to=${base + 3 * HOUR}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ group: 'model', bucket: 'hour', from: new Date(base).toISOString(), t: [base, base + HOUR, base + 2 * HOUR] });
    expect(res.body.series).toEqual([
      { name: 'sim-image', other: false, cost_usd: [0, 2, 0], requests: [0, 1, 0], total_usd: '2.000000', total_requests: 1 },
      { name: 'sim-chat', other: false, cost_usd: [1.5, 0, 0.25], requests: [2, 0, 1], total_usd: '1.750000', total_requests: 3 },
    ]);
  });

  it('answers spend per key per day, and one key alone', async () => {
    const byKey = await gw.api('GET', `/admin/api/usage/series?group=key&bucket=day&from=${new Date(base).toISOString()}&to=${new Date(base + 86_400_000).toISOString()}`);
    expect(byKey.status).toBe(200);
    expect(byKey.body.t).toEqual([base]);
    expect(byKey.body.series.map((s: { name: string; cost_usd: number[] }) => [s.name, s.cost_usd])).toEqual([
      [b.id, [9.25]],
      [a.id, [3.5]],
    ]);
    const one = await gw.api('GET', `/admin/api/usage/series?group=model&bucket=day&key=${a.id}&from=${base}&to=${base + 86_400_000}`);
    expect(one.body.series.map((s: { name: string; total_usd: string }) => [s.name, s.total_usd])).toEqual([
      ['sim-chat', '1.500000'],
      ['sim-image', '2.000000'],
    ].sort((x, y) => Number(y[1]) - Number(x[1])));
  });

  it('sums the groups beyond the largest into one "other" series', async () => {
    const t0 = base + 10 * HOUR;
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push((await gw.createKey({ name: `many-${i}` })).id);
    await gw.services.usage.insertMany(ids.map((id, i) => ({ key_id: id, model: 'sim-chat', channel: 'simulator', endpoint: '/v1/chat/completions', status: 200, input_units: 1, output_units: 1, cost_micros: (i + 1) * 1000, latency_ms: 5, created_at: t0 })));
    const res = await gw.api('GET', `/admin/api/usage/series?group=key&bucket=hour&from=${t0}&to=${t0 + HOUR}`);
    expect(res.body.series).toHaveLength(8);
    expect(res.body.series[0].name).toBe(ids[9]);
    expect(res.body.series[7]).toEqual({ name: '3 more', other: true, cost_usd: [0.006], requests: [3], total_usd: '0.006000', total_requests: 3 });
  });

  it('counts a video task once on the overview and keeps its duration out of HTTP latency', async () => {
    const task = await gw.createKey({ name: 'video-overview' });
    const now = Date.now();
    const row = { key_id: task.id, model: 'sim-video', channel: 'simulator', input_units: 0, output_units: 0, cost_micros: 0 };
    await gw.services.usage.insertMany([
      { ...row, endpoint: 'video', status: 200, latency_ms: 40, created_at: now - 60_000 },
      { ...row, endpoint: 'video.settle', status: 200, output_units: 5, cost_micros: 2_000_000, latency_ms: 45_000, created_at: now - 10_000 },
    ]);
    const res = await gw.api('GET', '/admin/api/overview?range=hour');
    expect(res.status).toBe(200);
    const sum = (xs: number[]) => xs.reduce((x, y) => x + y, 0);
    expect(res.body.totals).toMatchObject({ requests: 1, errors: 0, cost_usd: '2.000000' });
    expect(sum(res.body.requests)).toBe(1);
    expect(sum(res.body.tasks_ended)).toBe(1);
    expect(Math.max(...res.body.p99_ms.filter((v: number | null) => v !== null))).toBe(50);
    expect(res.body.task_p99_s.filter((v: number | null) => v !== null)).toEqual([60]);
    expect(res.body.spend_by_model).toEqual([{ model: 'sim-video', requests: 1, cost_usd: '2.000000' }]);
    // The usage totals and the series count the task once too.
    const grouped = await gw.api('GET', `/admin/api/usage?group_by=key&key=${task.id}`);
    expect(grouped.body.data).toMatchObject([{ group: task.id, requests: 1, cost_usd: '2.000000' }]);
  });

  it('finds tasks by the start of their id, lists the fail reason, and shows what was asked for', async () => {
    const owner = await gw.createKey({ name: 'tasks-owner' });
    const made = await createTask(gw.url, owner.key, { model: 'sim-video', prompt: 'a red kite over a beach', duration: 4, resolution: '720p' });
    expect(made.status).toBe(200);
    const id: string = made.body.data.task_id;
    await waitForTask(gw.url, owner.key, id, (r) => r.status === 'SUCCESS');
    const found = await gw.api('GET', `/admin/api/tasks?id=${encodeURIComponent(id.slice(0, id.length - 2))}`);
    expect(found.body.data.map((t: { task_id: string }) => t.task_id)).toContain(id);
    expect(found.body.data[0]).toHaveProperty('fail_reason', '');
    expect((await gw.api('GET', `/admin/api/tasks?id=${encodeURIComponent(id.slice(1))}`)).body.data).toEqual([]);
    const detail = await gw.api('GET', `/admin/api/tasks/${id}`);
    expect(detail.body.requested).toEqual({ seconds: '4', size: expect.any(String), resolution: '720p' });
    // A failed task's reason is in the list.
    await gw.services.store.db.updateTable('tasks').set({ status: 'FAILURE', fail_reason: 'content policy: the prompt was refused' }).where('task_id', '=', id).execute();
    const failed = await gw.api('GET', `/admin/api/tasks?status=FAILURE&key=${owner.id}`);
    expect(failed.body.data).toMatchObject([{ task_id: id, fail_reason: 'content policy: the prompt was refused' }]);
  });

  it('keeps the message a refused request was answered with on its ledger row, and in the CSV', async () => {
    const client = await gw.createKey({ name: 'refused-client' });
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${client.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] }),
    });
    const answered = ((await res.json()) as { error: { message: string } }).error.message;
    expect(res.status).toBeGreaterThanOrEqual(400);
    const ok = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${client.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(ok.status).toBe(200);
    await gw.services.ledger.flush();
    const rows = (await gw.api('GET', `/admin/api/usage?key=${client.id}`)).body.data;
    expect(rows.map((r: { model: string; error: string }) => [r.model, r.error])).toEqual([
      ['sim-chat', ''],
      ['no-such-model', answered],
    ]);
    expect(answered).toContain('no-such-model');
    const csv = (await gw.api('GET', `/admin/api/usage?key=${client.id}&format=csv`)).body as string;
    expect(csv.split('\n')[0].endsWith(',latency_ms,error')).toBe(true);
    expect(csv).toContain(answered.includes(',') || answered.includes('"') ? `"${answered.replace(/"/g, '""')}"` : answered);
  });

  it('describes the series endpoint in /openapi.json', async () => {
    const doc: any = await (await fetch(`${gw.url}/openapi.json`)).json();
    expect(doc.paths['/admin/api/usage/series']?.get).toBeTruthy();
  });

  it('refuses a bad group, bucket or range with what is allowed', async () => {
    const bad = async (query: string) => (await gw.api('GET', `/admin/api/usage/series?${query}`)).body.error?.message;
    expect(await bad('group=project')).toBe('group must be one of key, model');
    expect(await bad('bucket=minute')).toBe('bucket must be one of hour, day');
    expect(await bad(`from=${base + HOUR}&to=${base}`)).toBe('from must be earlier than to');
    expect(await bad(`bucket=hour&from=${base - 100 * 86_400_000}&to=${base}`)).toBe('a series has at most 1000 buckets: by hour a range of up to 41 days, by day up to 1000 days (asked: 2400 hours)');
    expect((await gw.api('GET', '/admin/api/usage/series?from=yesterday')).status).toBe(400);
  });
});
