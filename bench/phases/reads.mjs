// JSON reads beside the floor: GET /v1/models and GET /v1/video/generations/{id} against a raw
// node:http server answering the same bytes; task read latency with 1,000 and with 1,000,000
// tasks stored (two gateway processes over two databases, measured in alternating turns).
import { fetch } from 'undici';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { throughput, latency } from '../lib/measure.mjs';
import { startServer } from '../lib/children.mjs';
import { seedTasks, sampleIds } from '../lib/seed-tasks.mjs';

async function fetchBody(url, headers) {
  const res = await fetch(url, { headers });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}: ${text.slice(0, 300)}`);
  return text;
}

async function rawJsonServer(ctx, name, body) {
  const file = join(ctx.tmp, `${name}.json`);
  writeFileSync(file, body);
  const s = await startServer(`raw-json-${name}`, [join(ctx.root, 'bench/servers/raw-json.mjs'), file]);
  ctx.stopLater.push(s);
  return s;
}

export async function modelsPhase(ctx) {
  const { mg, auth, P } = ctx;
  const body = await fetchBody(`${mg.url}/v1/models`, auth);
  const raw = await rawJsonServer(ctx, 'models', body);
  const load = await throughput(
    { mediagate: { url: mg.url, path: '/v1/models', headers: auth, pid: mg.pid }, raw: { url: raw.url, path: '/v1/models', pid: raw.pid } },
    P.load,
  );
  return { bytes: Buffer.byteLength(body), models: JSON.parse(body).data.length, load };
}

export async function taskReadsPhase(ctx) {
  const { mg, mgLarge, auth, P } = ctx;
  const path = (id) => `/v1/video/generations/${id}`;
  const smallIds = sampleIds(P.tasks.small, 1000).map(path);
  const largeIds = sampleIds(P.tasks.large, 5000).map(path);
  const body = await fetchBody(`${mg.url}${smallIds[0]}`, auth);
  const raw = await rawJsonServer(ctx, 'task', body);
  const load = await throughput(
    {
      mediagate: { url: mg.url, paths: smallIds, path: smallIds[0], headers: auth, pid: mg.pid },
      mediagateLarge: { url: mgLarge.url, paths: largeIds, path: largeIds[0], headers: auth, pid: mgLarge.pid },
      raw: { url: raw.url, path: '/v1/video/generations/x', pid: raw.pid },
    },
    P.load,
  );
  const lat = await latency(
    { small: { url: mg.url, paths: smallIds, headers: auth }, large: { url: mgLarge.url, paths: largeIds, headers: auth } },
    P.latency,
  );
  return { bytes: Buffer.byteLength(body), stored: { small: P.tasks.small, large: P.tasks.large }, seeding: ctx.seeding, load, latencyC1: lat };
}

/** Seeds both databases (before the large gateway starts, so it opens a table already full). */
export function seedBoth(ctx, templateId) {
  const small = seedTasks(ctx.dbPath, templateId, 0, ctx.P.tasks.small);
  const large = seedTasks(ctx.dbLargePath, templateId, 0, ctx.P.tasks.large);
  return { small, large };
}
