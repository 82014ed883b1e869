import type { Dispatcher } from 'undici';
import { UpstreamFailure } from '../../upstream/failure.js';
import type { Target } from '../../upstream/target.js';
import { getFollowingRedirects, sameOrigin, type ImageBytes } from '../video-support.js';
import type { CreatedTask, VideoAdapter, VideoCall, VideoGenerationRequest } from '../video-types.js';
import { KitHttp, settingsOf } from './http.js';
import { bufferResponse, withoutInline } from './inline-video.js';
import { withVideos, type Manifest } from './manifest.js';
import { capsOf, sizesOf } from './models.js';
import { bodyWith, createCall, estimateRequest, fetchImages, pathOf, validateRequest, variants } from './request.js';
import { interpolate } from './template.js';
import { viewTask } from './view.js';
import { absent, at, holds, text } from './values.js';

// The VideoAdapter a manifest describes: every step the task layer asks of a provider, driven by
// the manifest's data and the hooks it names.

function cancelRefused(err: unknown): err is UpstreamFailure {
  return err instanceof UpstreamFailure && err.kind === 'status' && err.status >= 400 && err.status < 500 && err.status !== 429;
}

/** A 4xx that speaks of the task itself (not of the key, the address, the clock or the rate). */
function taskRefused(err: unknown): err is UpstreamFailure {
  return cancelRefused(err) && ![401, 403, 404, 408].includes(err.status);
}

export interface KitVideoAdapter extends VideoAdapter {
  /** The create call's variant, path and body for a request (images already fetched when the manifest inlines them). */
  createCall(upstreamModel: string, req: VideoGenerationRequest, callbackUrl?: string, fetched?: Awaited<ReturnType<typeof fetchImages>>, uploaded?: Map<number, unknown>): ReturnType<typeof createCall>;
  fetchImages(target: Target, req: VideoGenerationRequest, signal?: AbortSignal): ReturnType<typeof fetchImages>;
}

export function videoAdapter(manifest: Manifest): KitVideoAdapter {
  const m = withVideos(manifest);
  const v = m.videos;
  const http = new KitHttp(m);
  const idPattern = v.task_id.pattern ? new RegExp(v.task_id.pattern) : null;
  const storedPattern = v.task_id.stored_pattern ? new RegExp(v.task_id.stored_pattern) : null;
  const acceptsCallback = variants(m).some((c) => JSON.stringify(c.body ?? {}).includes('{callback_url'));

  function storedId(id: string): string {
    if (storedPattern && !storedPattern.test(id)) throw new UpstreamFailure('malformed', `the stored ${m.name} task id does not have the form its reads need`, 0);
    return id;
  }

  /** What a read or cancel may name: `{id}` (the kept id) and `{id.<name>}`, the named groups of stored_pattern. */
  function idValues(upstreamId: string): Record<string, unknown> {
    const id = storedId(upstreamId);
    const out: Record<string, unknown> = { id };
    for (const [k, val] of Object.entries(storedPattern?.exec(id)?.groups ?? {})) if (val !== undefined) out[`id.${k}`] = val;
    return out;
  }

  const inline = v.task.result.download?.inline;

  /** The task read as kept: an inline video replaced by a note of its size (the bytes are read again for /content). */
  async function readKept(call: VideoCall, target: Target, upstreamId: string): Promise<Record<string, unknown>> {
    const out = await read(call, target, upstreamId);
    return inline ? withoutInline(out, inline.path) : out;
  }

  /** The task read, and the second read its answer asks for (`get.then`), folded into one task object. */
  async function read(call: VideoCall, target: Target, upstreamId: string): Promise<Record<string, unknown>> {
    const values = idValues(upstreamId);
    const g = v.get;
    const out = await http.call(call, target, { method: g.method ?? 'GET', path: pathOf(g.path, values), headers: g.headers, body: bodyWith(g.body, values) }, true);
    const then = g.then;
    if (!then || !holds(then.when, (name) => at(out, name))) return out;
    try {
      return { ...out, [then.into]: await http.call(call, target, { method: then.method ?? 'GET', path: pathOf(then.path, values) }) };
    } catch (err) {
      if (!then.errors_into || !taskRefused(err)) throw err;
      return { ...out, [then.errors_into]: { status: err.status, code: err.providerCode, message: err.message } };
    }
  }

  /** Whether a create failed only for its callback URL (the provider could not reach it). */
  function refusedCallback(err: unknown): boolean {
    const r = v.callback?.retry_without;
    return !!r && err instanceof UpstreamFailure && err.providerCode === r.code && err.message.toLowerCase().includes(r.message.toLowerCase());
  }

  async function download(call: VideoCall, target: Target, task: Record<string, unknown>, range?: string): Promise<Dispatcher.ResponseData> {
    const d = v.task.result.download ?? {};
    const gcsUri = d.gcs ? text(at(task, d.gcs.uri)) : '';
    if (d.gcs && gcsUri) return gcsDownload(call, target, gcsUri, settingsOf(m, target)[d.gcs.origin_setting] ?? '', range);
    if (d.inline) {
      // The video came inline: the task is read again for its bytes (the kept copy has none).
      const upstreamId = text(at(task, v.task_id.path));
      if (!upstreamId) throw new UpstreamFailure('malformed', 'the task holds no id to read its video again', 200);
      const fresh = await read(call, target, upstreamId);
      const b64 = text(at(fresh, d.inline.path));
      if (!b64) throw new UpstreamFailure('status', 'the provider no longer holds the video', 404);
      return bufferResponse(Buffer.from(b64, 'base64'), text(at(fresh, d.inline.mime ?? '')) || 'video/mp4', range);
    }
    let url: string;
    if (d.file) {
      const file = text(at(task, d.file.id));
      if (!file || (d.file.pattern && !new RegExp(d.file.pattern).test(file))) throw new UpstreamFailure('malformed', 'the task holds no file to download', 200);
      url = text(at(await http.call(call, target, { method: 'GET', path: pathOf(d.file.path, { file, task }) }), d.file.url));
      if (!/^https?:\/\//.test(url)) throw new UpstreamFailure('malformed', 'the file has no download URL', 200);
    } else {
      url = text(at(task, d.url ?? ''));
      if (!url) throw new UpstreamFailure('malformed', 'the task holds no video to download', 200);
    }
    const ranged = (): Record<string, string> => (range ? { range } : {});
    if (d.key !== 'same_origin') return getFollowingRedirects(call, target, url, ranged);
    // The key goes only to the channel's own origin: a URL elsewhere never sees it.
    const keyed = await http.authorize(target, { method: 'GET', url, headers: {} }, call);
    const first = sameOrigin(url, target.baseUrl) ? keyed.url : url;
    return getFollowingRedirects(call, target, first, (u) => ({ ...ranged(), ...(sameOrigin(u, target.baseUrl) ? keyed.headers : {}) }));
  }

  /** A Cloud Storage object (gs://bucket/object) through the JSON API (`alt=media`), with the channel's credentials. */
  async function gcsDownload(call: VideoCall, target: Target, uri: string, origin: string, range?: string): Promise<Dispatcher.ResponseData> {
    const parts = /^gs:\/\/([a-z0-9][a-z0-9._-]{1,221}[a-z0-9])\/(.+)$/.exec(uri);
    if (!parts || !/^https?:\/\//.test(origin)) throw new UpstreamFailure('malformed', 'the task holds no Cloud Storage object to download', 200);
    const url = `${origin.replace(/\/+$/, '')}/storage/v1/b/${encodeURIComponent(parts[1])}/o/${encodeURIComponent(parts[2])}?alt=media`;
    const keyed = await http.authorize(target, { method: 'GET', url, headers: {} }, call);
    // The token goes to the storage origin the operator configured only, never to a redirect elsewhere.
    return getFollowingRedirects(call, target, keyed.url, (u) => ({ ...(range ? { range } : {}), ...(sameOrigin(u, origin) ? keyed.headers : {}) }));
  }

  /** Hook: image upload. Each fetched image goes to the provider first; the ids it answers stand for the images in the create body. */
  async function uploadImages(call: VideoCall, target: Target, fetched: Map<number, ImageBytes> | undefined): Promise<Map<number, unknown> | undefined> {
    const u = v.upload_images;
    if (!u || !fetched) return undefined;
    const ids = await Promise.all(
      [...fetched].map(async ([i, bytes]) => {
        const out = await http.upload(call, target, u.path, u.field, bytes, `image-${i}`);
        const id = at(out, u.id);
        if (absent(id) || (typeof id !== 'string' && typeof id !== 'number')) throw new UpstreamFailure('malformed', `the ${m.name} image upload answered without an image id`, 200);
        return [i, id] as const;
      }),
    );
    return new Map(ids);
  }

  const adapter: KitVideoAdapter = {
    caps: (model) => capsOf(m, model),
    sizes: (model, mode) => sizesOf(m, model, mode),
    // The params list validate refuses others by (absent: every generation parameter is passed on).
    takesParam: (name) => !v.params || v.params.includes(name),
    validate: (model, req) => validateRequest(m, model, req),
    estimate: (model, req) => estimateRequest(m, model, req),
    expiresAfterS: (req) => (v.lifetime.param ? req.params[v.lifetime.param] : undefined) ?? v.lifetime.seconds,
    acceptsCallback,
    createCall: (model, req, callbackUrl, fetched, uploaded) => createCall(m, model, req, callbackUrl, fetched, uploaded),
    fetchImages: (target, req, signal) => fetchImages(m, target, req, signal),

    async create(call, target, req, opts = {}): Promise<CreatedTask> {
      const fetched = await fetchImages(m, target, req, call.signal);
      const uploaded = await uploadImages(call, target, fetched);
      const send = (callbackUrl?: string) => {
        const c = createCall(m, target.upstreamModel, req, callbackUrl, fetched, uploaded, settingsOf(m, target));
        return http.call(call, target, c).then((out) => ({ out, variant: c.variant, body: c.body }));
      };
      let sent: Awaited<ReturnType<typeof send>>;
      let callbackDropped = false;
      try {
        sent = await send(opts.callbackUrl);
      } catch (err) {
        // A provider that refuses the whole task when its callback URL does not answer: the
        // callback is only a hint, so the task is created without it and polled.
        if (!opts.callbackUrl || !refusedCallback(err)) throw err;
        sent = await send();
        callbackDropped = true;
      }
      const id = text(at(sent.out, v.task_id.path));
      if (!id || (idPattern && !idPattern.test(id))) throw new UpstreamFailure('malformed', 'the upstream accepted the task without a usable task id', 200);
      const named = (n: string) => (n.startsWith('request.') ? at(sent.body, n.slice(8)) : { value: id, variant: sent.variant, model: target.upstreamModel }[n]);
      const upstreamId = v.task_id.store ? (interpolate(v.task_id.store, named) ?? id) : id;
      return { upstreamId, raw: sent.out, ...(callbackDropped ? { callbackDropped } : {}) };
    },

    get: readKept,

    view: (task, now) => viewTask(m, task, now),
  };

  const list = v.list;
  if (list) {
    Object.assign(adapter, { getManyMax: list.max_ids });
    adapter.getMany = async (call, target, upstreamIds) => {
      const ids = upstreamIds.slice(0, list.max_ids);
      const q = new URLSearchParams();
      for (const [k, val] of Object.entries(list.query ?? {})) q.set(k, val.replace('{count}', String(Math.max(1, ids.length))));
      for (const id of ids) q.append(list.ids_param, id);
      const out = await http.call(call, target, { method: 'GET', path: `${list.path}?${q.toString()}` });
      const items = at(out, list.items);
      if (!Array.isArray(items)) throw new UpstreamFailure('malformed', `the ${m.name} task list has no ${list.items} array`, 200);
      const wanted = new Set(ids);
      const found = new Map<string, Record<string, unknown>>();
      for (const item of items as unknown[]) {
        const id = text(at(item, list.id));
        if (item && typeof item === 'object' && wanted.has(id)) found.set(id, item as Record<string, unknown>);
      }
      return found;
    };
  }

  const cancel = v.cancel;
  if (cancel) {
    // A provider cancels only some tasks (queued ones, usually): its 4xx is a refusal, not a failure.
    adapter.cancel = async (call, target, upstreamId) => {
      try {
        const values = idValues(upstreamId);
        await http.call(call, target, { method: cancel.method ?? 'POST', path: pathOf(cancel.path, values), headers: cancel.headers, body: bodyWith(cancel.body, values) });
        return { accepted: true, message: '' };
      } catch (err) {
        if (cancelRefused(err)) return { accepted: false, message: err.message };
        throw err;
      }
    };
  }

  if (v.task.result.download) adapter.download = download;
  return adapter;
}
