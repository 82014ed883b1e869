import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startGateway, tempDir, type TestGateway } from './helpers/gateway.js';
import { createTask, eventually, waitForTask } from './helpers/video.js';
import { startReceiver } from './helpers/webhook-receiver.js';
import { newWebhookSecret } from '../src/tasks/webhooks/signing.js';
import { sampleVideo } from '../src/simulator/mp4.js';

// What an operator sees of a task: one structured log line per status move (no prompt, no key)
// and /metrics series for moves by provider and status, webhook attempts and backlog, archive bytes.

describe('task logs and metrics', () => {
  let gw: TestGateway;
  const dir = tempDir('mediagate-videos-');
  const lines: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  beforeAll(async () => {
    vi.spyOn(process.stderr, 'write').mockImplementation(((chunk: unknown, ...rest: unknown[]) => {
      lines.push(String(chunk));
      return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
    }) as typeof process.stderr.write);
    gw = await startGateway({ storage: { type: 'local', dir: dir.path, tick_ms: 20 }, webhooks: { allow_insecure: true, tick_ms: 20 } });
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    await gw.close();
    dir.remove();
  });

  it('logs each status move of a task and counts moves, webhook attempts and archived bytes', async () => {
    const rx = await startReceiver();
    try {
      const k = await gw.createKey();
      await gw.services.lifecycle.secrets.rotate(k.id, newWebhookSecret(), Date.now(), 0);
      const prompt = 'a very secret corgi storyline';
      const created = await createTask(gw.url, k.key, { model: 'sim-video', prompt, callback_url: rx.url });
      const id = created.body.data.task_id;
      await waitForTask(gw.url, k.key, id, (r) => r.status === 'SUCCESS');
      await eventually(async () => (await gw.services.lifecycle.archives.get(id))?.state === 'stored' && rx.received.length === 1, 10_000, 'archive and webhook');

      const moves = lines.filter((l) => l.includes('"video task status"') && l.includes(id)).map((l) => JSON.parse(l));
      // One line per move: a slow poll may see SUBMITTED → SUCCESS in one step, so the chain, not
      // its length, is what holds — it starts at SUBMITTED, each move starts where the last ended.
      expect(moves.length).toBeGreaterThanOrEqual(1);
      expect(moves[0].from).toBe('SUBMITTED');
      for (let i = 1; i < moves.length; i++) expect(moves[i].from).toBe(moves[i - 1].status);
      expect(moves[moves.length - 1]).toMatchObject({ task_id: id, model: 'sim-video', channel: 'simulator', provider: 'simulator', status: 'SUCCESS' });
      expect(typeof moves[0].elapsed_s).toBe('number');
      for (const l of lines.filter((x) => x.includes(id))) {
        expect(l).not.toContain('secret corgi');
        expect(l).not.toContain(k.key);
      }

      const metrics = await (await fetch(`${gw.url}/metrics`)).text();
      expect(metrics).toMatch(/mediagate_video_task_moves_total\{provider="simulator",status="SUCCESS"\} 1\b/);
      expect(metrics).toMatch(/mediagate_webhook_attempts_total\{outcome="ok"\} 1\b/);
      expect(metrics).toMatch(/mediagate_webhook_pending 0\b/);
      expect(metrics).toContain(`mediagate_archive_bytes_total ${sampleVideo().length}`);
      expect(metrics).toMatch(/mediagate_archive_copies_total\{outcome="ok"\} 1\b/);
    } finally {
      await rx.close();
    }
  });
});
