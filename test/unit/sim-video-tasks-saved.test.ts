import { afterAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startSimulator } from '../../src/simulator/server.js';
import { taskMap } from '../../src/simulator/video-common.js';
import { tempDir } from '../helpers/gateway.js';

// The simulator's tasks file (the embedded simulator keeps its video tasks across restarts): what
// a closed simulator wrote, a new one reads back — changes made in place (a cancel) included — and
// the file stays bounded.

const ARK = '/api/v3/contents/generations/tasks';
const auth = { authorization: 'Bearer sk', 'content-type': 'application/json' };

describe('simulator video tasks saved to its tasks file', () => {
  const dir = tempDir('mediagate-simfile-');
  afterAll(() => dir.remove());

  it('brings back every task, a cancel and the creation order after a restart', async () => {
    const tasksFile = join(dir.path, 'tasks.json');
    const signingSecret = randomBytes(32);
    const first = await startSimulator({ videoSeconds: 60, signingSecret, tasksFile });
    const create = async (base: string, prompt: string) =>
      ((await (await fetch(`${base}${ARK}`, { method: 'POST', headers: auth, body: JSON.stringify({ model: 'doubao-seedance-1-0-pro-250528', content: [{ type: 'text', text: prompt }] }) })).json()) as any).id as string;
    const a = await create(first.url, 'first');
    const b = await create(first.url, 'second');
    expect((await fetch(`${first.url}${ARK}/${a}`, { method: 'DELETE', headers: auth })).status).toBe(200);
    await first.close();

    const second = await startSimulator({ videoSeconds: 60, signingSecret, tasksFile });
    try {
      const read = async (id: string) => (await (await fetch(`${second.url}${ARK}/${id}`, { headers: auth })).json()) as any;
      expect((await read(a)).status).toBe('cancelled');
      expect((await read(b)).status).toBe('queued');
      const c = await create(second.url, 'third');
      const list = (await (await fetch(`${second.url}${ARK}?page_size=10`, { headers: auth })).json()) as any;
      expect(list.items.map((t: any) => t.id)).toEqual([c, b, a]);
    } finally {
      await second.close();
    }
  });

  it('keeps the newest 1000 tasks of a part', async () => {
    const tasksFile = join(dir.path, 'bounded.json');
    const sim = await startSimulator({ tasksFile });
    const tasks = taskMap<{ n: number }>(sim.state, 'test.part');
    for (let n = 0; n < 1100; n++) tasks.set(`t${n}`, { n });
    await sim.close();
    const saved = JSON.parse(readFileSync(tasksFile, 'utf8'));
    expect(saved.parts['test.part']).toHaveLength(1000);
    expect(saved.parts['test.part'][0]).toEqual(['t100', { n: 100 }]);
    expect(saved.parts['test.part'][999]).toEqual(['t1099', { n: 1099 }]);
  });

  it('starts without saved tasks when the file does not parse', async () => {
    const tasksFile = join(dir.path, 'broken.json');
    writeFileSync(tasksFile, '{"parts": {"ark.video": [["x", ');
    const sim = await startSimulator({ tasksFile });
    try {
      const res = await fetch(`${sim.url}${ARK}/cgt-20260101000000-aaaaa`, { headers: auth });
      expect(res.status).toBe(404);
    } finally {
      await sim.close();
    }
  });
});
