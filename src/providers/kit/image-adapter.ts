import type { Dispatcher } from 'undici';
import { GatewayError, errors } from '../../http/errors.js';
import { allowsPrivateNetwork } from '../../upstream/address-guard.js';
import { UpstreamFailure } from '../../upstream/failure.js';
import { readJsonBody } from '../../upstream/json.js';
import type { Target } from '../../upstream/target.js';
import { usageCount } from '../../upstream/usage-number.js';
import type { EditInput, ImageDatum, ImageParams, ImagesAdapter, ImagesBilled, ImagesCall, ImagesResult, PendingTasks, TaskRef } from '../image-types.js';
import { multipartBody, type FormFile } from '../multipart-body.js';
import { sameOrigin } from '../video-support.js';
import { KitHttp } from './http.js';
import type { CreateVariant, ImageManifest, Manifest } from './manifest.js';
import { imageCaps, imageFacts, imageRequest, inputBytes, uploadsOnDisk, type ImageOperation, type ImageRequest } from './image-request.js';
import { pathOf } from './request.js';
import { FETCHING, FileValue, fill, ImageRef, type RequestScope } from './template.js';
import { at, holds, passes, text } from './values.js';
import { stateOf, textOf } from './view.js';

// The ImagesAdapter a manifest's `images` describes: the OpenAI Images request checked and mapped
// (image-request.ts), one upstream call per `per_call` images (n fanned out), answers read as JSON
// or as image bytes, and a provider that answers with a task polled until its images are ready —
// or, past the wait, handed back as pending tasks (plain data) that `check` reads until they end.

const DEFAULT_INTERVAL_MS = 1000;
const DEFAULT_TIMEOUT_S = 120;
/** How long a task is followed after the client stopped waiting, when the manifest does not say. */
const DEFAULT_LIFETIME_S = 900;
const MAX_IMAGE_ANSWER = 64 * 1024 * 1024;

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });

/** Every value at a dotted path where `*` walks each item of a list, flattened. */
export function allAt(value: unknown, path: string): unknown[] {
  if (path === '') return Array.isArray(value) ? value : [value];
  let cur: unknown[] = [value];
  for (const key of path.split('.')) {
    const next: unknown[] = [];
    for (const v of cur) {
      if (key === '*') {
        if (Array.isArray(v)) next.push(...(v as unknown[]));
      } else if (v !== null && typeof v === 'object') {
        const got = (v as Record<string, unknown>)[key];
        if (got !== undefined) next.push(got);
      }
    }
    cur = next;
  }
  return cur.flatMap((v) => (Array.isArray(v) ? v : [v]));
}

/** An upstream answer: JSON, or the image itself. */
type Answer = { json: Record<string, unknown> } | { bytes: Buffer; mime: string };

interface Sent {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: Record<string, unknown>;
  multipart?: boolean;
}

function variants(m: ImageManifest): CreateVariant[] {
  return Array.isArray(m.images.create) ? m.images.create : [m.images.create];
}

export function imageAdapter(manifest: Manifest): ImagesAdapter {
  if (!manifest.images) throw new Error(`the ${manifest.type} manifest has no images capability`);
  const m = manifest as ImageManifest;
  const spec = m.images;
  const http = new KitHttp(m);
  /** The transforms of a variant's body that need the client's images (read or fetched first). */
  const fetching = (v: CreateVariant) => new Set([...JSON.stringify(v.body ?? {}).matchAll(new RegExp(`\\|(${[...FETCHING].join('|')})\\b`, 'g'))].map((x) => x[1]));
  const multipart = (v: CreateVariant) => (v.encoding ?? spec.encoding) === 'multipart';

  function scope(model: string, req: ImageRequest, n: number, fetched: RequestScope['fetched'], files?: RequestScope['files']): RequestScope {
    const facts = imageFacts(m, model).facts;
    const refs = req.images.map((img, i) => new ImageRef(img.url ?? '', 'reference_image', i));
    const mask = req.mask ? new ImageRef('', 'reference_image', req.images.length) : undefined;
    const values: Record<string, unknown> = { ...req, n, model, images: refs, image: refs[0], mask, extra: undefined };
    const lookup = (name: string): unknown => {
      const dot = name.indexOf('.');
      if (dot > 0) {
        const [head, rest] = [name.slice(0, dot), name.slice(dot + 1)];
        if (head === 'extra') return at(req.extra, rest);
        if (head === 'facts') return facts[rest];
        if (head === 'images') return refs[Number(rest)];
      }
      return values[name];
    };
    const neutral = { prompt: req.prompt, mode: 'text' as const, images: [], params: {}, metadata: {} };
    return { model, req: neutral, facts, maps: spec.maps ?? {}, fetched, files, lookup };
  }

  async function send(call: ImagesCall, target: Target, s: Sent, publicOnly = false): Promise<Answer> {
    let body: string | NodeJS.ReadableStream | undefined;
    const headers = { ...s.headers };
    if (s.body !== undefined && s.multipart) {
      const fields: Record<string, unknown> = {};
      const files: FormFile[] = [];
      for (const [k, v] of Object.entries(s.body)) {
        const many = Array.isArray(v) ? v : [v];
        if (!many.some((x) => x instanceof FileValue)) fields[k] = v;
        else for (const x of many) if (x instanceof FileValue) files.push({ name: k, filename: x.filename, contentType: x.mimeType, ...(x.onDisk ? { path: x.onDisk.path, size: x.onDisk.size } : { bytes: x.bytes }) });
      }
      const form = multipartBody(fields, files);
      body = form.stream;
      headers['content-type'] = form.contentType;
      headers['content-length'] = String(form.length);
    } else if (s.body !== undefined) body = JSON.stringify(s.body);
    const res = await call.upstream.send({ url: s.url, method: s.method as Dispatcher.HttpMethod, headers, body: body as string, signal: call.signal, publicOnly, traceparent: call.traceparent, tracestate: call.tracestate });
    if (res.statusCode < 200 || res.statusCode >= 300) throw refused(await http.failure(res));
    const type = String(res.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
    if (type.startsWith('image/')) {
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const c of res.body) {
        size += (c as Buffer).length;
        if (size > MAX_IMAGE_ANSWER) {
          res.body.destroy();
          throw new UpstreamFailure('oversized', `the ${m.name} image is larger than ${MAX_IMAGE_ANSWER} bytes`, res.statusCode);
        }
        chunks.push(c as Buffer);
      }
      return { bytes: Buffer.concat(chunks), mime: type };
    }
    const json = await readJsonBody(res, call.signal);
    if (!json || typeof json !== 'object' || Array.isArray(json)) throw new UpstreamFailure('malformed', `${m.name} answered with something that is neither JSON nor an image`, res.statusCode);
    try {
      http.checkEnvelope(json as Record<string, unknown>);
    } catch (err) {
      throw err instanceof UpstreamFailure ? refused(err) : err;
    }
    const unwrap = m.api.unwrap;
    const inner = unwrap ? at(json, unwrap) : json;
    return { json: inner && typeof inner === 'object' ? (inner as Record<string, unknown>) : {} };
  }

  /** A request signed with the channel's credentials (multipart bodies are signed without their body). */
  async function signed(call: ImagesCall, target: Target, method: string, path: string, headers: Record<string, string> | undefined, body?: Record<string, unknown>, asForm = false): Promise<Sent> {
    const out = await http.signed(call, target, { method, path, headers, body: asForm ? undefined : body });
    if (asForm) delete out.headers['content-type'];
    return { method, url: out.url, headers: out.headers, body, multipart: asForm };
  }

  /** Images, billing and refusal markers of a finished answer. */
  function imagesOf(a: Answer): { data: ImageDatum[]; billed?: ImagesBilled } {
    if ('bytes' in a) return { data: [{ b64_json: a.bytes.toString('base64'), mime: a.mime }] };
    const data: ImageDatum[] = [];
    for (const r of Array.isArray(spec.result) ? spec.result : [spec.result]) {
    const flags = r.flagged !== undefined ? allAt(a.json, r.flagged) : [];
    for (const [i, item] of allAt(a.json, r.items).entries()) {
      // Flagged by the provider's safety checker: withheld (a blacked-out picture is no image).
      if (flags[i] === true) continue;
      const url = r.url !== undefined ? text(at(item, r.url)) : '';
      const b64 = r.b64 !== undefined ? text(at(item, r.b64)) : '';
      const mime = r.mime !== undefined ? text(at(item, r.mime)) : '';
      const revised = r.revised_prompt !== undefined ? text(at(item, r.revised_prompt)) : '';
      const said = revised ? { revised_prompt: revised } : {};
      if (b64) data.push({ b64_json: b64, ...(mime ? { mime } : {}), ...said });
      else if (/^https?:\/\//.test(url)) data.push({ url, ...said });
    }
    }
    const u = spec.usage;
    if (!u) return { data };
    const first = (paths: string[]) => {
      for (const p of paths) {
        const vals = allAt(a.json, p).map(usageCount).filter((v): v is number => v !== null);
        if (vals.length) return vals.reduce((s, v) => s + v, 0);
      }
      return undefined;
    };
    const n = first(u.paths);
    const input = u.input ? first(u.input) : undefined;
    const billed: ImagesBilled = {};
    if (n !== undefined) billed[u.unit === 'tokens' ? 'outputTokens' : u.unit] = n;
    if (input !== undefined) billed.inputTokens = input;
    return { data, billed };
  }

  /** An error answer that is the provider's content-safety refusal (moderation.errors) as the client's 400; any other as it is. */
  function refused(f: UpstreamFailure): UpstreamFailure | GatewayError {
    const e = spec.moderation?.errors;
    if (!e || (e.status && !e.status.includes(f.status)) || (e.codes && !e.codes.some((c) => String(c) === f.providerCode))) return f;
    return new GatewayError(400, spec.moderation!.code ?? 'content_policy_violation', `${m.name} refused to make the image: ${f.message}`);
  }

  function refusal(a: Answer, fallback: string): GatewayError | null {
    const mod = spec.moderation;
    if (!mod?.any || !('json' in a)) return null;
    const json = a.json;
    const holds = (t: (typeof mod.any)[number]) => {
      const values = (Array.isArray(t.path) ? t.path : [t.path]).flatMap((p) => allAt(json, p));
      return values.some((v) => passes(v, t)) || (t.present === false && values.length === 0);
    };
    if (!mod.any.some(holds)) return null;
    const message = (mod.message && textOf(a.json, mod.message)) || fallback;
    return new GatewayError(400, mod.code ?? 'content_policy_violation', `${m.name} refused to make the image: ${message}`);
  }

  /** The create variant of a request: the first whose `when` holds (n is the request's). */
  function variantOf(req: ImageRequest, s: RequestScope): CreateVariant {
    const all = variants(m);
    return all.find((c) => !c.when || holds(c.when, (name) => (name === 'operation' ? req.operation : s.lookup!(name)))) ?? all[all.length - 1];
  }

  /** One create call for `n` images: its answer (sync) or its task's reference. */
  async function create(call: ImagesCall, target: Target, req: ImageRequest, v: CreateVariant, n: number, fetched: RequestScope['fetched'], files: RequestScope['files']): Promise<Answer> {
    const s = scope(target.upstreamModel, req, n, fetched, files);
    const filled = fill(v.body ?? {}, s);
    // Fields other_fields passes on go under the template's own, which win.
    const body = { ...req.passed, ...(filled && typeof filled === 'object' ? (filled as Record<string, unknown>) : {}) };
    const sent = await signed(call, target, v.method ?? 'POST', pathOf(v.path, { model: target.upstreamModel }), v.headers, body, multipart(v));
    return send(call, target, sent);
  }

  /** The create calls: all must succeed, or (`partial`) at least one, the failed ones left out. */
  async function createAll(calls: (() => Promise<Answer>)[]): Promise<Answer[]> {
    if (!spec.partial) return Promise.all(calls.map((c) => c()));
    const settled = await Promise.allSettled(calls.map((c) => c()));
    const ok = settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    if (!ok.length) throw (settled[0] as PromiseRejectedResult).reason;
    return ok;
  }

  // --- queued providers ---------------------------------------------------------------------

  function taskOf(a: Answer): TaskRef {
    const t = spec.task!;
    const json = 'json' in a ? a.json : {};
    const id = text(at(json, t.id.path));
    if (!id || (t.id.pattern && !new RegExp(t.id.pattern).test(id))) throw new UpstreamFailure('malformed', `${m.name} accepted the task without a usable task id`, 200);
    if (!t.poll_url) return { id };
    const url = text(at(json, t.poll_url.path));
    if (!/^https?:\/\//.test(url)) throw new UpstreamFailure('malformed', `${m.name} accepted the task without a polling URL`, 200);
    return { id, pollUrl: url };
  }

  function sameSite(url: string, base: string): boolean {
    try {
      const tail = (h: string) => h.split('.').slice(-2).join('.');
      const [a, b] = [new URL(url), new URL(base)];
      return a.protocol === b.protocol && tail(a.hostname) === tail(b.hostname);
    } catch {
      return false;
    }
  }

  async function read(call: ImagesCall, target: Target, ref: TaskRef): Promise<Record<string, unknown>> {
    const t = spec.task!;
    if (!ref.pollUrl) {
      const get = t.get!;
      const sent = await signed(call, target, get.method ?? 'GET', pathOf(get.path, { id: ref.id }), get.headers);
      const a = await send(call, target, { ...sent, body: undefined });
      return 'json' in a ? a.json : {};
    }
    return fetchUrl(call, target, ref.pollUrl);
  }

  /** A URL the provider handed out (polling, result): the key goes where the manifest trusts it, the address guard judges the rest. */
  async function fetchUrl(call: ImagesCall, target: Target, url: string): Promise<Record<string, unknown>> {
    const key = spec.task!.poll_url?.key ?? 'none';
    const trusted = key === 'same_origin' ? sameOrigin(url, target.baseUrl) : key === 'same_site' ? sameSite(url, target.baseUrl) : false;
    const headers = trusted ? (await http.authorize(target, { method: 'GET', url, headers: { accept: 'application/json' } }, call)).headers : { accept: 'application/json' };
    const publicOnly = !allowsPrivateNetwork(target.channel) && !sameOrigin(url, target.baseUrl);
    const a = await send(call, target, { method: 'GET', url, headers }, publicOnly);
    return 'json' in a ? a.json : {};
  }

  type Polled = { done: true; answer: Answer } | { done: false };

  /** One read of a task: its answer once it succeeded; a failure thrown; not done yet otherwise. */
  async function poll(call: ImagesCall, target: Target, ref: TaskRef): Promise<Polled> {
    const task = await read(call, target, ref);
    const t = spec.task!;
    const s = stateOf(t.status, task);
    if (s.state === 'succeeded') {
      if (!t.result_url) return { done: true, answer: { json: task } };
      // The images are elsewhere (fal's response_url): a failed run answers there with its error.
      const url = text(at(task, t.result_url.path));
      if (!/^https?:\/\//.test(url)) throw new UpstreamFailure('malformed', `${m.name} finished task ${ref.id} without a result URL`, 200);
      return { done: true, answer: { json: await fetchUrl(call, target, url) } };
    }
    if (s.state === 'failed' || s.state === 'cancelled' || s.state === 'expired') {
      const refused = refusal({ json: task }, '');
      if (refused) throw refused;
      const code = s.code || textOf(task, t.failure?.code) || s.state;
      const message = s.message || textOf(task, t.failure?.message) || `the ${m.name} task ${s.state}`;
      throw new UpstreamFailure('status', `${m.name} task ${ref.id} ${s.state}: ${message}`, 502, code);
    }
    return { done: false };
  }

  async function cancel(call: ImagesCall, target: Target, ref: TaskRef): Promise<boolean> {
    const c = spec.task?.cancel;
    if (!c) return false;
    try {
      const sent = await signed(call, target, c.method ?? 'POST', pathOf(c.path, { id: ref.id }), c.headers, undefined, spec.encoding === 'multipart');
      await send(call, target, { ...sent, body: undefined });
      return true;
    } catch {
      return false;
    }
  }

  /** One read of each open task: the finished leave the list, adding what they made and billed. */
  async function check(call: ImagesCall, target: Target, pending: PendingTasks): Promise<PendingTasks> {
    const next: PendingTasks = { tasks: [], cancelled: pending.cancelled, images: pending.images, billed: { ...pending.billed } };
    for (const ref of pending.tasks) {
      let got: Polled;
      try {
        got = await poll(call, target, ref);
      } catch (err) {
        // A task that failed (or was cancelled) makes nothing and is billed nothing.
        if (err instanceof GatewayError || (err instanceof UpstreamFailure && err.kind === 'status' && err.status === 502)) continue;
        if (pending.cancelled.includes(ref.id) && err instanceof UpstreamFailure && err.status === 404) continue;
        // Not readable now (the network, the provider): read again next time.
        next.tasks.push(ref);
        continue;
      }
      if (got.done) add(next, imagesOf(got.answer));
      else next.tasks.push(ref);
    }
    return next;
  }

  function add(total: { images: number; billed: ImagesBilled }, got: { data: ImageDatum[]; billed?: ImagesBilled }): void {
    total.images += got.data.length;
    for (const [k, v] of Object.entries(got.billed ?? {}) as [keyof ImagesBilled, number][]) total.billed[k] = (total.billed[k] ?? 0) + v;
  }

  async function run(call: ImagesCall, target: Target, operation: ImageOperation, params: ImageParams, edit?: EditInput): Promise<ImagesResult> {
    const req = imageRequest(m, target.upstreamModel, operation, params, edit);
    const f = imageFacts(m, target.upstreamModel);
    const check = scope(target.upstreamModel, req, req.n, undefined);
    for (const rule of spec.rules ?? []) if (holds(rule.when, (name) => (name === 'operation' ? req.operation : check.lookup!(name)))) throw new GatewayError(400, 'invalid_request', rule.message, {}, rule.param);
    const v = variantOf(req, check);
    const used = fetching(v);
    const files = uploadsOnDisk(req);
    // Uploads sent only as file parts stream from disk; anything else inlined is read (or fetched) first.
    const onlyFiles = [...used].every((t) => t === 'file') && files.size === req.images.length + (req.mask ? 1 : 0);
    const needsBytes = (used.size > 0 || multipart(v) || !!edit) && !onlyFiles;
    const fetched = needsBytes && (req.images.length || req.mask) ? await inputBytes(m, target, req, call.signal) : undefined;
    const perCall = Math.max(1, v.per_call ?? f.per_call ?? req.n);
    const counts: number[] = [];
    for (let left = req.n; left > 0; left -= perCall) counts.push(Math.min(perCall, left));
    const answers = await createAll(counts.map((n) => () => create(call, target, req, v, n, fetched, files)));
    let finals: Answer[] = answers;
    let pending: ImagesResult['pending'];
    if (spec.task) {
      const refs = answers.map(taskOf);
      const wait = { ...f.wait, ...call.wait };
      const interval = wait.interval_ms ?? DEFAULT_INTERVAL_MS;
      const deadline = Date.now() + (wait.timeout_s ?? DEFAULT_TIMEOUT_S) * 1000;
      const got = new Map<string, Answer>();
      while (got.size < refs.length && Date.now() < deadline && !call.signal?.aborted) {
        await sleep(Math.min(interval, Math.max(0, deadline - Date.now())), call.signal);
        if (call.signal?.aborted) break;
        let polled: (readonly [TaskRef, Polled])[];
        try {
          polled = await Promise.all(refs.filter((r) => !got.has(r.id)).map(async (r) => [r, await poll(call, target, r)] as const));
        } catch (err) {
          // A read cut short by the client leaving: the tasks still run, and are settled below.
          if (call.signal?.aborted) break;
          throw err;
        }
        for (const [r, p] of polled) if (p.done) got.set(r.id, p.answer);
      }
      if (got.size < refs.length) {
        const open = refs.filter((r) => !got.has(r.id));
        const cancelled: string[] = [];
        // A client that left: its tasks are cancelled where the provider can; what still runs is settled.
        if (call.signal?.aborted) for (const r of open) if (await cancel({ upstream: call.upstream }, target, r)) cancelled.push(r.id);
        const state: PendingTasks = { tasks: open, cancelled, images: 0, billed: {} };
        for (const a of got.values()) add(state, imagesOf(a));
        pending = { taskIds: open.map((r) => r.id), state, lifetimeS: spec.task.lifetime_s ?? DEFAULT_LIFETIME_S };
        return { created: Math.floor(Date.now() / 1000), data: [], pending };
      }
      finals = refs.map((r) => got.get(r.id)!);
    }
    const data: ImageDatum[] = [];
    const billed: ImagesBilled = {};
    for (const a of finals) {
      const got = imagesOf(a);
      data.push(...got.data);
      add({ images: 0, billed }, got);
    }
    if (!data.length) {
      for (const a of finals) {
        const refused = refusal(a, 'the provider returned no image');
        if (refused) throw refused;
      }
      // Not a refusal (a model that replied in words): the provider's failure, said plainly.
      throw errors.upstreamError(`${m.name} answered without an image (nothing is charged); a model that replies in text may need the prompt to ask for a picture.`);
    }
    return { created: Math.floor(Date.now() / 1000), data, ...(Object.keys(billed).length ? { billed } : {}), ...answered(finals, billed) };
  }

  /** What the client's answer carries beside the images: fields copied from the provider's answer, and usage in OpenAI's shape. */
  function answered(finals: Answer[], billed: ImagesBilled): Partial<ImagesResult> {
    const out: Partial<ImagesResult> = {};
    const first = finals.find((a): a is { json: Record<string, unknown> } => 'json' in a)?.json;
    for (const field of spec.answer?.copy ?? []) {
      const v = first?.[field];
      if (v === undefined || v === null) continue;
      if (field === 'created') {
        if (typeof v === 'number') out.created = v;
      } else if (field === 'usage') out.usage = v;
      else out.extra = { ...out.extra, [field]: v };
    }
    if (spec.usage?.report) {
      const [input, output] = [billed.inputTokens ?? 0, billed.outputTokens ?? 0];
      out.usage = { input_tokens: input, input_tokens_details: { text_tokens: 0, image_tokens: 0 }, output_tokens: output, total_tokens: input + output };
    }
    return out;
  }

  return {
    generate: (call, target, params) => run(call, target, 'generate', params),
    edit: (call, target, input) => run(call, target, 'edit', input, input),
    queued: !!spec.task,
    check,
    caps: (model) => imageCaps(m, model),
  };
}

/** The placeholder names an images template may use (checked when a manifest loads). */
export const IMAGE_NAMES = ['model', 'prompt', 'n', 'operation', 'size', 'width', 'height', 'aspect_ratio', 'resolution', 'quality', 'seed', 'negative_prompt', 'output_format', 'response_format', 'user', 'images', 'image', 'mask', 'item'];

export function isImageName(name: string): boolean {
  return IMAGE_NAMES.includes(name) || /^(extra|facts|images|item)\.[A-Za-z0-9_.-]+$/.test(name);
}

