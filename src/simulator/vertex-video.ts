import { createHmac, createVerify, timingSafeEqual } from 'node:crypto';
import { VERTEX_SIMULATOR_ACCOUNT, VERTEX_VEO_DURATIONS, VERTEX_VEO_IMAGE_TYPES, VERTEX_VEO_MODELS, VERTEX_VEO_RATIOS } from '../providers/vertex/wire.js';
import { sendJson, readJson, type SimContext, type SimRoute, type SimState } from './router.js';
import { googleError } from './veo-video.js';
import { sampleVideo } from './mp4.js';
import { newId, outcomeOf, partState, phaseAt, sendSampleVideo, taskMap, videoSecret, type SimOutcome } from './video-common.js';

// The simulator's Vertex AI part: Veo as Vertex AI serves it, with Google's OAuth in front.
//   POST /token  grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion=<RS256 JWT>
//        → {access_token, expires_in, token_type: "Bearer"} (oauth2.googleapis.com/token)
//   POST /v1/projects/{p}/locations/{l}/publishers/google/models/{model}:predictLongRunning
//        → {name: "projects/{p}/locations/{l}/publishers/google/models/{model}/operations/{uuid}"}
//   POST …/models/{model}:fetchPredictOperation {operationName} → the operation
//   GET  /storage/v1/b/{bucket}/o/{object}?alt=media → the object (Cloud Storage JSON API)
// Every API call needs `Authorization: Bearer <access token>` from the token endpoint. Without
// parameters.storageUri the finished operation holds the video inline (bytesBase64Encoded); with
// it, a gs:// object in that bucket. Outcome markers in the prompt are those of video-common.ts.

const SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const TOKEN_TTL_S = 3599;
const MODEL_PATH = /^\/v1\/projects\/([a-z][a-z0-9-]{4,28}[a-z0-9])\/locations\/([a-z0-9-]+)\/publishers\/google\/models\/([^/:]+):(predictLongRunning|fetchPredictOperation)$/;
const OBJECT_PATH = /^\/storage\/v1\/b\/([^/]+)\/o\/([^/]+)$/;
const PARAMS = new Set(['aspectRatio', 'resolution', 'durationSeconds', 'negativePrompt', 'personGeneration', 'sampleCount', 'seed', 'storageUri', 'enhancePrompt', 'generateAudio', 'compressionQuality']);

interface VertexOperation {
  name: string;
  model: string;
  createdMs: number;
  outcome: SimOutcome;
  /** gs://bucket/prefix the video goes to, or '' for an inline answer. */
  storageUri: string;
}

const part = (state: SimState) => partState(state, 'vertex.video', () => ({ operations: taskMap<VertexOperation>(state, 'vertex.video') }));

function tokenMac(state: SimState, expiresS: number): string {
  return createHmac('sha256', videoSecret(state)).update(`vertex-token:${expiresS}`).digest('base64url');
}

/** An access token: its expiry, sealed with the simulator's secret (so tokens outlive a restart). */
function issueToken(state: SimState, expiresS: number): string {
  return `ya29.sim.${expiresS}.${tokenMac(state, expiresS)}`;
}

function tokenValid(state: SimState, token: string): boolean {
  const m = /^ya29\.sim\.(\d+)\.([A-Za-z0-9_-]+)$/.exec(token);
  if (!m || Number(m[1]) * 1000 < Date.now()) return false;
  const want = Buffer.from(tokenMac(state, Number(m[1])));
  const got = Buffer.from(m[2]);
  return want.length === got.length && timingSafeEqual(want, got);
}

function authenticate(ctx: SimContext): boolean {
  const h = ctx.req.headers.authorization ?? '';
  if (h.startsWith('Bearer ') && tokenValid(ctx.state, h.slice(7))) return true;
  sendJson(ctx.res, 401, googleError(401, 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.', 'UNAUTHENTICATED'));
  return false;
}

const grantError = (ctx: SimContext, error: string, description: string) => sendJson(ctx.res, 400, { error, error_description: description });

/** The OAuth 2.0 JWT bearer grant: the assertion's signature checked against the service account's public key. */
function token(ctx: SimContext): void {
  const form = new URLSearchParams(ctx.body.toString('utf8'));
  if (form.get('grant_type') !== JWT_BEARER) return grantError(ctx, 'unsupported_grant_type', 'Invalid grant_type: ' + (form.get('grant_type') ?? ''));
  const parts = (form.get('assertion') ?? '').split('.');
  if (parts.length !== 3) return grantError(ctx, 'invalid_request', 'Invalid JWT: the assertion is not a JWT.');
  let header: Record<string, unknown>;
  let claims: Record<string, unknown>;
  try {
    header = JSON.parse(Buffer.from(parts[0], 'base64url').toString()) as Record<string, unknown>;
    claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString()) as Record<string, unknown>;
  } catch {
    return grantError(ctx, 'invalid_request', 'Invalid JWT: the header or claims are not JSON.');
  }
  if (header.alg !== 'RS256') return grantError(ctx, 'invalid_grant', 'Invalid JWT: the algorithm must be RS256.');
  const signed = createVerify('RSA-SHA256').update(`${parts[0]}.${parts[1]}`).verify(VERTEX_SIMULATOR_ACCOUNT.public_key, parts[2], 'base64url');
  if (claims.iss !== VERTEX_SIMULATOR_ACCOUNT.client_email || !signed) return grantError(ctx, 'invalid_grant', 'Invalid JWT Signature.');
  const now = Math.floor(Date.now() / 1000);
  if (typeof claims.exp !== 'number' || typeof claims.iat !== 'number' || claims.exp <= now || claims.iat > now + 300 || claims.exp - claims.iat > 3600) {
    return grantError(ctx, 'invalid_grant', 'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe.');
  }
  if (typeof claims.aud !== 'string' || !claims.aud.endsWith('/token')) return grantError(ctx, 'invalid_grant', 'Invalid JWT: the audience must be the token endpoint.');
  if (typeof claims.scope !== 'string' || !claims.scope.split(' ').includes(SCOPE)) return grantError(ctx, 'invalid_scope', 'Invalid OAuth scope or ID token audience provided.');
  sendJson(ctx.res, 200, { access_token: issueToken(ctx.state, now + TOKEN_TTL_S), expires_in: TOKEN_TTL_S, token_type: 'Bearer' });
}

const invalid = (ctx: SimContext, message: string): undefined => void sendJson(ctx.res, 400, googleError(400, message));

function imageProblem(v: unknown, where: string): string | undefined {
  const img = v as Record<string, unknown> | null;
  if (!img || typeof img !== 'object') return `${where} must be an image object.`;
  if (typeof img.gcsUri === 'string') return undefined;
  if (typeof img.bytesBase64Encoded !== 'string' || !img.bytesBase64Encoded) return `${where}: one of bytesBase64Encoded or gcsUri is required.`;
  if (typeof img.mimeType !== 'string' || !VERTEX_VEO_IMAGE_TYPES.includes(img.mimeType)) return `${where}.mimeType must be one of ${VERTEX_VEO_IMAGE_TYPES.join(', ')}.`;
  const b = Buffer.from(img.bytesBase64Encoded, 'base64');
  const png = b.subarray(0, 4).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
  const jpeg = b.subarray(0, 3).equals(Buffer.from([0xff, 0xd8, 0xff]));
  return png || jpeg ? undefined : `${where} is not a valid image.`;
}

/** Checks a predictLongRunning body the way Vertex documents it; answers 400 and undefined when it is wrong. */
function parseCreate(ctx: SimContext, model: string): Omit<VertexOperation, 'name'> | undefined {
  const spec = VERTEX_VEO_MODELS[model];
  if (!spec) return void sendJson(ctx.res, 404, googleError(404, `Publisher Model \`projects/${ctx.params[0]}/locations/${ctx.params[1]}/publishers/google/models/${model}\` not found.`));
  const body = readJson(ctx, (m) => googleError(400, `Invalid JSON payload received. ${m}`));
  if (!body) return undefined;
  if (!Array.isArray(body.instances) || body.instances.length !== 1) return invalid(ctx, 'instances must hold exactly one instance.');
  const inst = body.instances[0] as Record<string, unknown>;
  if (!inst || typeof inst !== 'object') return invalid(ctx, 'instances[0] must be an object.');
  for (const k of Object.keys(inst)) if (!['prompt', 'image', 'lastFrame', 'referenceImages', 'video'].includes(k)) return invalid(ctx, `Invalid JSON payload received. Unknown name "${k}" at 'instances[0]': Cannot find field.`);
  if (inst.prompt !== undefined && typeof inst.prompt !== 'string') return invalid(ctx, 'instances[0].prompt must be a string.');
  const prompt = typeof inst.prompt === 'string' ? inst.prompt : '';
  let reference = false;
  for (const k of ['image', 'lastFrame'] as const) {
    if (inst[k] === undefined) continue;
    const p = imageProblem(inst[k], `instances[0].${k}`);
    if (p) return invalid(ctx, p);
  }
  if (inst.lastFrame !== undefined && inst.image === undefined) return invalid(ctx, 'lastFrame requires image.');
  if (inst.referenceImages !== undefined) {
    const refs = inst.referenceImages;
    if (!Array.isArray(refs) || refs.length < 1 || refs.length > 3) return invalid(ctx, 'referenceImages must hold 1 to 3 asset images.');
    if (inst.image !== undefined) return invalid(ctx, 'referenceImages cannot be combined with image.');
    for (const [i, r] of refs.entries()) {
      const ref = r as Record<string, unknown> | null;
      if (!ref || ref.referenceType !== 'asset') return invalid(ctx, `referenceImages[${i}].referenceType must be "asset".`);
      const p = imageProblem(ref.image, `referenceImages[${i}].image`);
      if (p) return invalid(ctx, p);
    }
    reference = true;
  }
  if (!prompt && inst.image === undefined) return invalid(ctx, 'A prompt is required for text-to-video.');
  const params = (body.parameters ?? {}) as Record<string, unknown>;
  if (typeof params !== 'object' || Array.isArray(params)) return invalid(ctx, 'parameters must be an object.');
  for (const k of Object.keys(params)) if (!PARAMS.has(k)) return invalid(ctx, `Invalid JSON payload received. Unknown name "${k}" at 'parameters': Cannot find field.`);
  const ratio = params.aspectRatio ?? '16:9';
  if (typeof ratio !== 'string' || !VERTEX_VEO_RATIOS.includes(ratio)) return invalid(ctx, `aspectRatio must be one of ${VERTEX_VEO_RATIOS.join(', ')}.`);
  if (reference && ratio !== '16:9') return invalid(ctx, 'Reference image to video supports aspectRatio 16:9 only.');
  const resolution = params.resolution ?? '720p';
  if (typeof resolution !== 'string' || !spec.resolutions.includes(resolution)) return invalid(ctx, `resolution must be one of ${spec.resolutions.join(', ')} for ${model}.`);
  const duration = params.durationSeconds ?? 8;
  if (typeof duration !== 'number' || !VERTEX_VEO_DURATIONS.includes(duration)) return invalid(ctx, `durationSeconds must be one of ${VERTEX_VEO_DURATIONS.join(', ')}.`);
  if (reference && duration !== 8) return invalid(ctx, 'Reference image to video supports durationSeconds 8 only.');
  if (params.sampleCount !== undefined && (!Number.isInteger(params.sampleCount) || (params.sampleCount as number) < 1 || (params.sampleCount as number) > 4)) return invalid(ctx, 'sampleCount must be 1 to 4.');
  if (params.seed !== undefined && (!Number.isInteger(params.seed) || (params.seed as number) < 0 || (params.seed as number) > 4294967295)) return invalid(ctx, 'seed must be a uint32.');
  const storageUri = params.storageUri ?? '';
  if (typeof storageUri !== 'string' || (storageUri && !/^gs:\/\/[a-z0-9][a-z0-9._-]{1,221}[a-z0-9](\/.*)?$/.test(storageUri))) return invalid(ctx, 'storageUri must be a Cloud Storage URI (gs://bucket/prefix).');
  return { model, createdMs: Date.now(), outcome: outcomeOf(prompt), storageUri };
}

/** The object a finished operation wrote: its bucket and name, from the operation's storageUri and id. */
function objectOf(op: VertexOperation): { bucket: string; object: string } {
  const [, bucket, prefix = ''] = /^gs:\/\/([^/]+)\/?(.*)$/.exec(op.storageUri) ?? [];
  const id = op.name.split('/').pop() ?? '';
  return { bucket, object: `${prefix && !prefix.endsWith('/') ? `${prefix}/` : prefix}${id}/sample_0.mp4` };
}

function operationObject(state: SimState, op: VertexOperation, now: number): Record<string, unknown> {
  const { phase } = phaseAt(op.createdMs, op.outcome, state.options.videoSeconds * 1000, now);
  if (phase === 'queued' || phase === 'running') return { name: op.name };
  if (phase === 'cancelled') return { name: op.name, done: true, error: { code: 1, message: 'The operation was cancelled.' } };
  if (op.outcome === 'failed') return { name: op.name, done: true, error: { code: 13, message: 'Video generation failed due to an internal error. Please try again.' } };
  if (op.outcome === 'expired') return { name: op.name, done: true, error: { code: 4, message: 'The operation did not finish in time.' } };
  const type = 'type.googleapis.com/cloud.ai.large_models.vision.GenerateVideoResponse';
  if (op.outcome === 'moderated') {
    return { name: op.name, done: true, response: { '@type': type, raiMediaFilteredCount: 1, raiMediaFilteredReasons: ['The prompt could not be submitted: it violates the usage guidelines. Support code: 29310472.'] } };
  }
  const { bucket, object } = objectOf(op);
  const video = op.storageUri ? { gcsUri: `gs://${bucket}/${object}`, mimeType: 'video/mp4' } : { bytesBase64Encoded: sampleVideo().toString('base64'), mimeType: 'video/mp4' };
  return { name: op.name, done: true, response: { '@type': type, raiMediaFilteredCount: 0, videos: [video] } };
}

function modelCall(ctx: SimContext): void {
  const [project, location, rawModel, method] = ctx.params;
  const model = decodeURIComponent(rawModel);
  const p = part(ctx.state);
  if (method === 'predictLongRunning') {
    const parsed = parseCreate(ctx, model);
    if (!parsed) return;
    const id = newId(p.operations, 16, '0123456789abcdef').replace(/^(.{8})(.{4})(.{4})/, '$1-$2-$3-');
    const name = `projects/${project}/locations/${location}/publishers/google/models/${model}/operations/${id}`;
    p.operations.set(name, { name, ...parsed });
    return sendJson(ctx.res, 200, { name });
  }
  const body = readJson(ctx, (m) => googleError(400, `Invalid JSON payload received. ${m}`));
  if (!body) return;
  if (typeof body.operationName !== 'string' || !body.operationName) return invalid(ctx, 'operationName is required.');
  const op = p.operations.get(body.operationName);
  if (!op || op.model !== model || !op.name.startsWith(`projects/${project}/locations/${location}/`)) return sendJson(ctx.res, 404, googleError(404, `Operation ${body.operationName} not found.`));
  sendJson(ctx.res, 200, operationObject(ctx.state, op, Date.now()));
}

/** The Cloud Storage JSON API's media download of an object a finished operation wrote. */
function storageObject(ctx: SimContext): void {
  const bucket = decodeURIComponent(ctx.params[0]);
  const object = decodeURIComponent(ctx.params[1]);
  if (ctx.url.searchParams.get('alt') !== 'media') return sendJson(ctx.res, 400, googleError(400, 'Only alt=media downloads are served here.'));
  const written = [...part(ctx.state).operations.values()].some((op) => {
    if (!op.storageUri || operationObject(ctx.state, op, Date.now()).response === undefined) return false;
    const o = objectOf(op);
    return o.bucket === bucket && o.object === object && op.outcome === 'succeeded';
  });
  if (!written) return sendJson(ctx.res, 404, googleError(404, `No such object: ${bucket}/${object}`));
  sendSampleVideo(ctx);
}

export function vertexVideoRoutes(): SimRoute[] {
  return [
    { name: 'vertex.token', method: 'POST', pattern: /^\/token$/, auth: false, faults: true, handle: token },
    { name: 'vertex.video', method: 'POST', pattern: MODEL_PATH, auth: true, authenticate, errorBody: (status, message) => googleError(status, message), handle: modelCall },
    { name: 'vertex.storage', method: 'GET', pattern: OBJECT_PATH, auth: true, authenticate, errorBody: (status, message) => googleError(status, message), handle: storageObject },
  ];
}
