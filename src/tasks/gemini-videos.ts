import { GatewayError, errors } from '../http/errors.js';
import { MIME, sniffImageType } from '../http/image-type.js';
import type { TaskRow } from '../store/repos/tasks.js';
import { TASK_ID } from './request.js';

// Google's video generation (the Gemini API's predictLongRunning) over the gateway's video tasks,
// for every video model whatever its provider: Google's body mapped to a native create body, and a
// task shown as Google's long-running operation. The video is served by the gateway itself at
// /v1beta/files/{name}:download, so it downloads with the client's own key. Gemini error bodies
// carry no field name, so every 400 names the field in its message.

/** What a predictLongRunning body becomes: the native body, and Google's name of each image by its index there. */
export interface GeminiVideoBody {
  body: Record<string, unknown>;
  imageNames: string[];
}

const INSTANCE_FIELDS = ['prompt', 'image', 'lastFrame', 'referenceImages'];
/** Google's parameters with a native field of their own; the rest pass to the provider as they are (metadata). */
const NATIVE: Record<string, string> = { aspectRatio: 'ratio', resolution: 'resolution', durationSeconds: 'duration', seed: 'seed', generateAudio: 'generate_audio' };
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const DIGITS = /^-?\d{1,12}$/;

const bad = (message: string) => errors.invalidRequest(message);
const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);
/** Proto3 JSON: a null field is an absent one. */
const given = (v: unknown) => v !== undefined && v !== null;

/** `{bytesBase64Encoded, mimeType}` → a data: URL of the type the bytes are (never the declared one alone). */
function inlineImage(v: unknown, at: string): string {
  if (!isObject(v)) throw bad(`${at} must be an object {"bytesBase64Encoded": "<base64>", "mimeType": "image/png"}.`);
  for (const k of Object.keys(v)) {
    if (k === 'gcsUri') throw bad(`${at}.gcsUri is not supported: send the image inline as ${at}.bytesBase64Encoded with its mimeType.`);
    if (k !== 'bytesBase64Encoded' && k !== 'mimeType') throw bad(`${at} has an unknown field ${k}; an image is {"bytesBase64Encoded", "mimeType"}.`);
  }
  if (typeof v.bytesBase64Encoded !== 'string' || !v.bytesBase64Encoded) throw bad(`${at}.bytesBase64Encoded is required: the image's bytes in base64.`);
  // Protobuf's JSON takes URL-safe base64 too.
  const data = v.bytesBase64Encoded.replace(/-/g, '+').replace(/_/g, '/');
  if (!BASE64.test(data)) throw bad(`${at}.bytesBase64Encoded is not base64.`);
  if (given(v.mimeType) && (typeof v.mimeType !== 'string' || !/^image\/[A-Za-z0-9.+-]+$/.test(v.mimeType))) throw bad(`${at}.mimeType must be an image type: image/png, image/jpeg or image/webp.`);
  const type = sniffImageType(Buffer.from(data.slice(0, 24), 'base64'));
  if (!type) throw bad(`${at} is not a PNG, JPEG or WEBP image.`);
  return `data:${MIME[type]};base64,${data}`;
}

/** An int32 as proto3 JSON writes it: a number, or its digits in a string. */
function integer(v: unknown, at: string): number {
  const n = typeof v === 'string' && DIGITS.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n)) throw bad(`${at} must be a whole number.`);
  return n;
}

/**
 * The native create body for `POST /v1beta/models/{model}:predictLongRunning`. The envelope
 * (`instances` holding one object, `parameters` an object) is the route schema's to check.
 */
export function geminiVideoBody(model: string, request: { instances: unknown[]; parameters?: unknown }): GeminiVideoBody {
  const inst = request.instances[0];
  if (!isObject(inst)) throw bad('instances[0] must be an object {"prompt", "image", "lastFrame", "referenceImages"}.');
  for (const k of Object.keys(inst)) {
    if (k === 'video') throw bad('instances[0].video (extending a video) is not supported by this gateway.');
    if (!INSTANCE_FIELDS.includes(k)) throw bad(`instances[0] has an unknown field ${k}; it takes ${INSTANCE_FIELDS.join(', ')}.`);
  }
  if (given(inst.prompt) && typeof inst.prompt !== 'string') throw bad('instances[0].prompt must be a string.');

  const images: { url: string; role: string }[] = [];
  const imageNames: string[] = [];
  const add = (v: unknown, at: string, role: string) => {
    images.push({ url: inlineImage(v, at), role });
    imageNames.push(at);
  };
  if (given(inst.image)) add(inst.image, 'instances[0].image', 'first_frame');
  if (given(inst.lastFrame)) {
    if (!given(inst.image)) throw bad('instances[0].lastFrame needs instances[0].image (the first frame).');
    add(inst.lastFrame, 'instances[0].lastFrame', 'last_frame');
  }
  if (given(inst.referenceImages)) {
    const refs = inst.referenceImages;
    if (!Array.isArray(refs) || refs.length === 0) throw bad('instances[0].referenceImages must be a list of {"image", "referenceType": "asset"}.');
    if (images.length) throw bad('instances[0].referenceImages cannot be combined with image or lastFrame.');
    refs.forEach((r, i) => {
      const at = `instances[0].referenceImages[${i}]`;
      if (!isObject(r)) throw bad(`${at} must be an object {"image", "referenceType": "asset"}.`);
      for (const k of Object.keys(r)) if (k !== 'image' && k !== 'referenceType') throw bad(`${at} has an unknown field ${k}; it takes image, referenceType.`);
      if (given(r.referenceType) && r.referenceType !== 'asset') throw bad(`${at}.referenceType must be "asset".`);
      add(r.image, `${at}.image`, 'reference_image');
    });
  }

  const body: Record<string, unknown> = { model, prompt: given(inst.prompt) ? inst.prompt : '' };
  if (images.length) body.images = images;
  const params = given(request.parameters) ? (request.parameters as Record<string, unknown>) : {};
  const metadata: [string, unknown][] = [];
  for (const [k, v] of Object.entries(params)) {
    if (!given(v)) continue;
    const at = `parameters.${k}`;
    if (k === 'sampleCount') {
      if (integer(v, at) !== 1) throw bad('parameters.sampleCount must be 1: an operation makes one video here (send one request per video).');
    } else if (k === 'durationSeconds' || k === 'seed') {
      body[NATIVE[k]] = integer(v, at);
    } else if (Object.hasOwn(NATIVE, k)) {
      body[NATIVE[k]] = v;
    } else {
      metadata.push([k, v]);
    }
  }
  if (metadata.length) body.metadata = Object.fromEntries(metadata);
  return { body, imageNames };
}

/** Google's names of the native fields, for the 400s of the checks every video API shares. */
const GEMINI_NAME: Record<string, string> = {
  prompt: 'instances[0].prompt',
  images: 'instances[0]',
  image: 'instances[0].image',
  duration: 'parameters.durationSeconds',
  resolution: 'parameters.resolution',
  ratio: 'parameters.aspectRatio',
  seed: 'parameters.seed',
  generate_audio: 'parameters.generateAudio',
  metadata: 'parameters',
};

/** A 400 about a native field, reworded with the field the client sent (`images[1]` → its image's name). */
export function asGeminiVideoError(err: unknown, imageNames: string[]): unknown {
  if (!(err instanceof GatewayError) || err.status !== 400 || !err.param) return err;
  const image = /^images\[(\d+)\]$/.exec(err.param);
  const name = image ? imageNames[Number(image[1])] : Object.hasOwn(GEMINI_NAME, err.param) ? GEMINI_NAME[err.param] : undefined;
  if (!name) return err;
  const message = err.message.startsWith(`${err.param} `) ? name + err.message.slice(err.param.length) : `${name}: ${err.message}`;
  return new GatewayError(err.status, err.code, message, err.headers, name);
}

const RESPONSE_TYPE = 'type.googleapis.com/google.ai.generativelanguage.v1beta.PredictLongRunningResponse';
/** google.rpc.Code numbers, for a failed task's `error.code`. */
const RPC_CODES: Record<string, number> = {
  CANCELLED: 1, UNKNOWN: 2, INVALID_ARGUMENT: 3, DEADLINE_EXCEEDED: 4, NOT_FOUND: 5, PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8, FAILED_PRECONDITION: 9, INTERNAL: 13, UNAVAILABLE: 14,
  cancelled: 1, expired: 4, timeout: 4,
};

/** The operation name of a task: `models/{model}/operations/{task_id}` (read back at GET /v1beta/{name}). */
export function operationName(model: string, taskId: string): string {
  return `models/${encodeURIComponent(model)}/operations/${taskId}`;
}

/**
 * The file name of a task's video. Google's SDK takes a file name from a `…/files/{name}` URI as
 * its first run of lowercase letters and digits, so the task id is written in hex.
 */
export function videoFileName(taskId: string): string {
  return Buffer.from(taskId, 'latin1').toString('hex');
}

/** The task id a file name stands for; null when it is none. */
export function taskIdOfFile(name: string): string | null {
  if (!/^(?:[0-9a-f]{2}){1,128}$/.test(name)) return null;
  const id = Buffer.from(name, 'hex').toString('latin1');
  return TASK_ID.test(id) ? id : null;
}

export function videoFileUri(base: string, taskId: string): string {
  return `${base}/v1beta/files/${videoFileName(taskId)}:download?alt=media`;
}

/**
 * A task as Google's operation: only its name while it runs; when done, the video's URI (served by
 * the gateway) or a google.rpc.Status whose message is the task's fail_reason.
 */
export function geminiOperation(row: Pick<TaskRow, 'task_id' | 'model' | 'status' | 'fail_reason'>, base: string): Record<string, unknown> {
  const name = operationName(row.model, row.task_id);
  if (row.status === 'SUCCESS') {
    return { name, done: true, response: { '@type': RESPONSE_TYPE, generateVideoResponse: { generatedSamples: [{ video: { uri: videoFileUri(base, row.task_id) } }] } } };
  }
  if (row.status === 'FAILURE') {
    const cut = row.fail_reason.indexOf(':');
    const code = cut > 0 ? row.fail_reason.slice(0, cut) : '';
    return { name, done: true, error: { code: Object.hasOwn(RPC_CODES, code) ? RPC_CODES[code] : RPC_CODES.UNKNOWN, message: row.fail_reason || 'The video could not be generated.' } };
  }
  return { name };
}
