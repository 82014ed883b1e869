// Small helpers for the video task tests: create and read tasks over HTTP and wait for a state.
import type OpenAI from 'openai';

export interface TaskAnswer {
  status: number;
  body: any;
}

export async function createTask(baseUrl: string, key: string, body: unknown): Promise<TaskAnswer> {
  const res = await fetch(`${baseUrl}/v1/video/generations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

export async function readTask(baseUrl: string, key: string, taskId: string): Promise<TaskAnswer> {
  const res = await fetch(`${baseUrl}/v1/video/generations/${taskId}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, body: await res.json() };
}

/** Reads the task until `done(record)` holds; fails after `timeoutMs`. */
export async function waitForTask(baseUrl: string, key: string, taskId: string, done: (record: any) => boolean, timeoutMs = 15_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  let last: TaskAnswer | undefined;
  while (Date.now() < deadline) {
    last = await readTask(baseUrl, key, taskId);
    if (last.status === 200 && done(last.body.data)) return last.body.data;
    await new Promise((r) => setTimeout(r, 40));
  }
  throw new Error(`task ${taskId} did not reach the expected state; last answer: ${JSON.stringify(last)}`);
}

export const isFinished = (r: any) => r.status === 'SUCCESS' || r.status === 'FAILURE';

export { eventually } from './eventually.js';

export async function simVideoStats(simUrl: string): Promise<{ tasks: Record<string, any>; max_inflight_gets: number }> {
  return (await (await fetch(`${simUrl}/__sim/video/stats`)).json()) as any;
}

export async function simFault(simUrl: string, fault: Record<string, unknown>): Promise<void> {
  const res = await fetch(`${simUrl}/__sim/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(fault) });
  if (res.status !== 200) throw new Error(`fault not accepted: ${await res.text()}`);
}

export async function simVideoConfig(simUrl: string, config: Record<string, unknown>): Promise<void> {
  const res = await fetch(`${simUrl}/__sim/video/config`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(config) });
  if (res.status !== 200) throw new Error(`config not accepted: ${await res.text()}`);
}

export const IMG = (n: number) => `https://example.com/frames/${n}.png`;

/** Retrieves a video through the openai SDK until it is completed or failed (15 s at most). */
export async function untilDone(client: OpenAI, id: string): Promise<OpenAI.Videos.Video> {
  for (const started = Date.now(); Date.now() - started < 15_000; ) {
    const v = await client.videos.retrieve(id);
    if (v.status === 'completed' || v.status === 'failed') return v;
    await new Promise((r) => setTimeout(r, 40));
  }
  throw new Error(`video ${id} did not finish`);
}
