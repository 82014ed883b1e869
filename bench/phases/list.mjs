// GET /v1/video/generations (the task list) with 1,000 and with 1,000,000 tasks of the one bench key
// stored: the first page, a page deep in the list (by cursor), and a status-filtered page, on the
// two gateway processes the task-reads phase seeds (ctx.mg: small table, ctx.mgLarge: large one).
// Keyset pagination over the (key_id, submit_time, task_id) indexes should make all of them cost
// the same on both tables. On its own:
//   node bench/run.mjs --only=list
import { fetch } from 'undici';
import { latency } from '../lib/measure.mjs';
import { seededTaskId } from '../lib/seed-tasks.mjs';

const cursor = (submitTime, taskId) => Buffer.from(`${submitTime}.${taskId}`, 'utf8').toString('base64url');

async function firstPage(url, auth) {
  const res = await fetch(`${url}/v1/video/generations?limit=1`, { headers: auth });
  const body = await res.json();
  if (res.status !== 200 || !body.data.tasks.length) throw new Error(`task list answered ${res.status}: ${JSON.stringify(body).slice(0, 300)}`);
  return body.data.tasks[0];
}

/** Paths of each kind of page for a table of `total` seeded tasks (all cloned with one submit_time). */
function paths(total, submitTime) {
  const deep = Array.from({ length: 200 }, (_, k) => `/v1/video/generations?limit=20&after=${cursor(submitTime, seededTaskId(Math.floor(((k + 0.5) * total) / 200)))}`);
  return {
    first: ['/v1/video/generations?limit=20'],
    deep,
    status: ['/v1/video/generations?limit=20&status=SUCCESS'],
  };
}

export async function listPhase(ctx) {
  const { mg, mgLarge, auth, P } = ctx;
  const top = await firstPage(mg.url, auth);
  await firstPage(mgLarge.url, auth);
  const small = paths(P.tasks.small, top.submit_time);
  const large = paths(P.tasks.large, top.submit_time);
  const targets = {};
  for (const kind of ['first', 'deep', 'status']) {
    targets[`${kind}Small`] = { url: mg.url, paths: small[kind], headers: auth };
    targets[`${kind}Large`] = { url: mgLarge.url, paths: large[kind], headers: auth };
  }
  const lat = await latency(targets, P.latency);
  const ratio = (kind) => lat[`${kind}Large`].p50Ms / lat[`${kind}Small`].p50Ms;
  return {
    stored: { small: P.tasks.small, large: P.tasks.large },
    pageSize: 20,
    latencyC1: lat,
    largeOverSmallP50: { first: ratio('first'), deep: ratio('deep'), status: ratio('status') },
  };
}
