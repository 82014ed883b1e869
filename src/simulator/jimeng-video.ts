import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { JIMENG_FRAMES, JIMENG_RATIOS, JIMENG_REQ_KEYS, JIMENG_SIMULATOR_ACCOUNT } from '../providers/jimeng/wire.js';
import { readJson, sendJson, type SimContext, type SimRoute, type SimState } from './router.js';
import { newId, openId, ossSignedUrl, outcomeOf, partState, phaseAt, sealId, serveSignedVideo, taskMap, videoSecret, type SimOutcome } from './video-common.js';

// The simulator's Jimeng part, in the wire format of Volcengine's visual API:
//   POST /?Action=CVSync2AsyncSubmitTask&Version=2022-08-31 {req_key, prompt, seed?, frames?, aspect_ratio?, binary_data_base64? | image_urls?}
//        → {code: 10000, message: "Success", request_id, data: {task_id}, status: 10000, time_elapsed}
//   POST /?Action=CVSync2AsyncGetResult&Version=2022-08-31  {req_key, task_id}
//        → {code: 10000, data: {status: in_queue | generating | done | not_found | expired, video_url}, …}
// Every request must carry a Volcengine HMAC-SHA256 signature (Authorization: HMAC-SHA256
// Credential=AK/date/cn-north-1/cv/request, SignedHeaders=…, Signature=…; X-Date; X-Content-Sha256)
// by the one account the part knows; the signing gateway refuses others with ResponseMetadata.Error.
// Outcome markers: [fail] ends with 50500 Internal Error, [moderation] with 50511 (output image
// refused), [expire] with status "expired"; Jimeng has no cancel, so [cancel] ends like [fail].

const ACTION_PATH = /^\/$/;
const VERSION = '2022-08-31';
const VIDEO = /^\/__sim\/jimeng\/videos\/([0-9a-z]+)\.mp4$/;
const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';
/** video_url lives an hour. */
const URL_TTL_S = 3600;

interface JimengTask {
  id: string;
  reqKey: string;
  prompt: string;
  frames: number;
  createdMs: number;
  outcome: SimOutcome;
}

const part = (state: SimState) => partState(state, 'jimeng.video', () => ({ tasks: taskMap<JimengTask>(state, 'jimeng.video') }));
const videoIdOf = (state: SimState, taskId: string) => sealId(videoSecret(state), taskId, 8, ALPHABET);

const answer = (code: number, message: string, data: unknown) => ({ code, message, request_id: `sim${Date.now()}`, data, status: code, time_elapsed: '12.5ms' });

/** The signing gateway's refusal, before any action runs. */
function metadataError(ctx: SimContext, status: number, codeN: number, code: string, message: string): false {
  const action = ctx.url.searchParams.get('Action') ?? '';
  sendJson(ctx.res, status, { ResponseMetadata: { RequestId: `sim${Date.now()}`, Action: action, Version: VERSION, Service: 'cv', Region: 'cn-north-1', Error: { CodeN: codeN, Code: code, Message: message } } });
  return false;
}

const sha256hex = (v: string | Buffer) => createHash('sha256').update(v).digest('hex');
const hmac = (key: string | Buffer, v: string) => createHmac('sha256', key).update(v).digest();
const enc = (v: string) => encodeURIComponent(v).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** Recomputes the request's Volcengine signature from what arrived. */
function authenticate(ctx: SimContext): boolean {
  const auth = String(ctx.req.headers.authorization ?? '');
  const m = /^HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$/.exec(auth);
  if (!m) return metadataError(ctx, 401, 100010, 'MissingAuthenticationToken', 'The request is not signed, or its Authorization header is malformed.');
  const [, ak, day, region, service, signedHeaders, signature] = m;
  if (ak !== JIMENG_SIMULATOR_ACCOUNT.apiKey) return metadataError(ctx, 401, 100009, 'InvalidAccessKey', 'The access key is invalid.');
  const date = String(ctx.req.headers['x-date'] ?? '');
  if (!/^\d{8}T\d{6}Z$/.test(date) || date.slice(0, 8) !== day) return metadataError(ctx, 401, 100011, 'InvalidTimestamp', 'X-Date is missing or does not match the credential scope.');
  const skewMs = Math.abs(Date.parse(`${date.slice(0, 4)}-${date.slice(4, 6)}-${date.slice(6, 8)}T${date.slice(9, 11)}:${date.slice(11, 13)}:${date.slice(13, 15)}Z`) - Date.now());
  if (!(skewMs <= 15 * 60_000)) return metadataError(ctx, 401, 100011, 'InvalidTimestamp', 'X-Date is more than 15 minutes off.');
  if (region !== 'cn-north-1' || service !== 'cv') return metadataError(ctx, 401, 100010, 'SignatureDoesNotMatch', `The credential scope ${region}/${service} is not cn-north-1/cv.`);
  const bodyHash = sha256hex(ctx.body);
  if (ctx.req.headers['x-content-sha256'] !== bodyHash) return metadataError(ctx, 401, 100010, 'SignatureDoesNotMatch', 'X-Content-Sha256 does not match the body.');
  const names = signedHeaders.split(';');
  if (!names.includes('host') || !names.includes('x-date')) return metadataError(ctx, 401, 100010, 'SignatureDoesNotMatch', 'SignedHeaders must include host and x-date.');
  const value = (n: string) => String(ctx.req.headers[n] ?? '').trim().replace(/\s+/g, ' ');
  const query = [...ctx.url.searchParams].map(([k, v]) => [enc(k), enc(v)]).sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0));
  const canonical = [ctx.req.method ?? 'POST', ctx.url.pathname, query.map(([k, v]) => `${k}=${v}`).join('&'), names.map((n) => `${n}:${value(n)}\n`).join(''), signedHeaders, bodyHash].join('\n');
  const scope = `${day}/${region}/${service}/request`;
  const key = hmac(hmac(hmac(hmac(JIMENG_SIMULATOR_ACCOUNT.apiSecret, day), region), service), 'request');
  const want = Buffer.from(createHmac('sha256', key).update(['HMAC-SHA256', date, scope, sha256hex(canonical)].join('\n')).digest('hex'));
  const given = Buffer.from(signature);
  if (want.length !== given.length || !timingSafeEqual(want, given)) return metadataError(ctx, 401, 100010, 'SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided.');
  return true;
}

function invalid(ctx: SimContext, message: string): undefined {
  sendJson(ctx.res, 400, answer(50400, `Invalid Request: ${message}`, null));
  return undefined;
}

const isBase64Image = (v: unknown) => typeof v === 'string' && /^[A-Za-z0-9+/]+={0,2}$/.test(v) && (v.startsWith('iVBORw0KGgo') || v.startsWith('/9j/'));

function parseSubmit(ctx: SimContext): Omit<JimengTask, 'id'> | undefined {
  const body = readJson(ctx, (m) => answer(50400, `Invalid Request: ${m}`, null));
  if (!body) return undefined;
  const reqKey = typeof body.req_key === 'string' ? body.req_key : '';
  const spec = JIMENG_REQ_KEYS[reqKey];
  if (!spec) return invalid(ctx, `req_key must be one of ${Object.keys(JIMENG_REQ_KEYS).join(', ')}`);
  const prompt = body.prompt ?? '';
  if (typeof prompt !== 'string' || prompt.length > 800) return invalid(ctx, 'prompt must be a string of at most 800 characters');
  if (body.image_urls !== undefined && body.binary_data_base64 !== undefined) return invalid(ctx, 'give image_urls or binary_data_base64, not both');
  const images = (body.binary_data_base64 ?? body.image_urls ?? []) as unknown[];
  if (!Array.isArray(images)) return invalid(ctx, 'binary_data_base64 and image_urls must be lists');
  if (!spec.images.includes(images.length)) return invalid(ctx, `${reqKey} takes ${spec.images.join(' or ')} image(s), got ${images.length}`);
  for (const [i, img] of images.entries()) {
    if (body.binary_data_base64 !== undefined ? !isBase64Image(img) : !(typeof img === 'string' && /^https?:\/\//.test(img))) return invalid(ctx, `image ${i} is not a JPEG or PNG image`);
  }
  if (!prompt && images.length === 0) return invalid(ctx, 'prompt is required');
  const frames = body.frames ?? 121;
  if (typeof frames !== 'number' || !JIMENG_FRAMES.includes(frames)) return invalid(ctx, `frames must be one of ${JIMENG_FRAMES.join(', ')}`);
  if (body.aspect_ratio !== undefined) {
    if (images.length > 0) return invalid(ctx, 'aspect_ratio applies to text-to-video only');
    if (typeof body.aspect_ratio !== 'string' || !JIMENG_RATIOS.includes(body.aspect_ratio)) return invalid(ctx, `aspect_ratio must be one of ${JIMENG_RATIOS.join(', ')}`);
  }
  if (body.seed !== undefined && (typeof body.seed !== 'number' || !Number.isInteger(body.seed))) return invalid(ctx, 'seed must be an integer');
  return { reqKey, prompt, frames, createdMs: Date.now(), outcome: outcomeOf(prompt) };
}

function result(state: SimState, t: JimengTask, now: number): Record<string, unknown> {
  const { phase } = phaseAt(t.createdMs, t.outcome, state.options.videoSeconds * 1000, now);
  if (phase === 'queued') return answer(10000, 'Success', { status: 'in_queue', video_url: '' });
  if (phase === 'running') return answer(10000, 'Success', { status: 'generating', video_url: '' });
  if (t.outcome === 'moderated') return answer(50511, 'Post Img Risk Not Pass', null);
  if (t.outcome === 'expired') return answer(10000, 'Success', { status: 'expired', video_url: '' });
  if (t.outcome !== 'succeeded') return answer(50500, 'Internal Error', null);
  const url = ossSignedUrl(state, videoSecret(state), `/__sim/jimeng/videos/${videoIdOf(state, t.id)}.mp4`, Math.min(URL_TTL_S, state.options.urlTtlS), now);
  return answer(10000, 'Success', { status: 'done', video_url: url, aigc_meta_tagged: true });
}

function errorFor(status: number, message: string): unknown {
  if (status === 429) return answer(50429, 'Request Has Reached API Limit, Please Try Later', null);
  if (status >= 500) return answer(50500, `Internal Error: ${message}`, null);
  return answer(50400, `Invalid Request: ${message}`, null);
}

export function jimengVideoRoutes(): SimRoute[] {
  const serve = (ctx: SimContext) => serveSignedVideo(ctx, videoSecret(ctx.state), VIDEO, (id) => openId(videoSecret(ctx.state), id, 8, ALPHABET) !== undefined);
  return [
    {
      name: 'jimeng.video.action',
      method: 'POST',
      pattern: ACTION_PATH,
      auth: true,
      authenticate,
      errorBody: errorFor,
      handle(ctx) {
        const action = ctx.url.searchParams.get('Action');
        if (ctx.url.searchParams.get('Version') !== VERSION) return void metadataError(ctx, 400, 100008, 'InvalidVersion', `Version must be ${VERSION}.`);
        const p = part(ctx.state);
        if (action === 'CVSync2AsyncSubmitTask') {
          const parsed = parseSubmit(ctx);
          if (!parsed) return;
          const id = newId(p.tasks, 19);
          p.tasks.set(id, { id, ...parsed });
          return sendJson(ctx.res, 200, answer(10000, 'Success', { task_id: id }));
        }
        if (action === 'CVSync2AsyncGetResult') {
          const body = readJson(ctx, (m) => answer(50400, `Invalid Request: ${m}`, null));
          if (!body) return;
          const t = p.tasks.get(String(body.task_id ?? ''));
          // A task is found only under the req_key it was submitted with.
          if (!t || t.reqKey !== body.req_key) return sendJson(ctx.res, 200, answer(10000, 'Success', { status: 'not_found', video_url: '' }));
          return sendJson(ctx.res, 200, result(ctx.state, t, Date.now()));
        }
        metadataError(ctx, 404, 100004, 'InvalidActionOrVersion', `Could not find operation ${action ?? ''} for version ${VERSION}.`);
      },
    },
    { name: 'jimeng.video.file', method: 'GET', pattern: VIDEO, auth: false, handle: serve },
    { name: 'jimeng.video.file', method: 'HEAD', pattern: VIDEO, auth: false, handle: serve },
  ];
}
