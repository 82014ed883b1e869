import { usageCount } from '../../upstream/usage-number.js';
import { signedUrlExpiry } from '../signed-url.js';
import type { BillableUnits, ProviderTaskState, ProviderTaskView, ResultDelivery } from '../video-types.js';
import type { StatusSpec, TaskSpec, TextSpec, VideoManifest } from './manifest.js';
import { absent, at, firstText, passes, text } from './values.js';

// The answer side of a manifest: a provider's task object read into neutral terms (state, result,
// failure reason, moderation, usage, progress, last update).

const FAILING = new Set<ProviderTaskState>(['failed', 'cancelled', 'expired']);

export function textOf(task: Record<string, unknown>, spec: TextSpec | undefined): string {
  if (!spec) return '';
  if (spec.value !== undefined) return spec.value;
  const v = spec.path !== undefined ? at(task, spec.path) : undefined;
  const got = Array.isArray(v) && spec.join !== undefined ? v.filter((x) => typeof x === 'string').join(spec.join) : text(v);
  return got || spec.default || '';
}

function updatedAt(task: Record<string, unknown>, spec: TaskSpec['updated_at']): number {
  for (const path of spec?.paths ?? []) {
    const v = at(task, path);
    let s = 0;
    if (spec!.format === 'unix_s' && typeof v === 'number') s = Math.floor(v);
    else if (spec!.format === 'unix_ms' && typeof v === 'number') s = Math.floor(v / 1000);
    else if (spec!.format === 'datetime') {
      // A wall-clock time ("2025-07-27 21:05:15.212") in the provider's zone.
      const m = /^(\d{4})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)/.exec(text(v));
      if (m) s = Math.floor(Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4] - (spec!.utc_offset_h ?? 0), +m[5], +m[6]) / 1000);
    }
    if (s > 0) return s;
  }
  return 0;
}

function usageOf(task: Record<string, unknown>, spec: TaskSpec['usage']): BillableUnits | null {
  if (!spec) return null;
  for (const path of spec.paths) {
    const v = at(task, path);
    if (spec.unit === 'tokens') {
      const n = usageCount(v);
      if (n !== null) return { unit: 'tokens', units: n };
      continue;
    }
    const n = typeof v === 'number' || typeof v === 'string' ? Number(v) : NaN;
    if (!Number.isFinite(n) || n <= 0) continue;
    const resolution = spec.resolution ? Number(at(task, spec.resolution.path)) : 0;
    return { unit: spec.unit, units: spec.round ? Math.max(1, Math.round(n)) : n, ...(resolution > 0 ? { resolution: spec.resolution!.format.replace('{value}', String(resolution)) } : {}) };
  }
  return null;
}

function resultOf(task: Record<string, unknown>, spec: TaskSpec['result'], updatedAtS: number, now: number): ResultDelivery | null {
  if (spec.url !== undefined) {
    const url = firstText(task, spec.url);
    if (url) {
      const expiry = spec.expiry ?? 'signed';
      const expiresAtS = expiry === 'signed' ? Math.floor(signedUrlExpiry(url, updatedAtS, now).expiresAt / 1000) : (updatedAtS || Math.floor(now / 1000)) + expiry.after_s;
      return { kind: 'url', url, expiresAtS };
    }
  }
  const d = spec.download;
  if (!d) return null;
  const where = [d.url, d.file?.id, d.gcs?.uri, d.inline?.path].filter((p): p is string => p !== undefined);
  if (where.some((p) => !absent(text(at(task, p))))) return { kind: 'download' };
  return null;
}

/** A task's state from its status word (or operation fields), with the code and message its map gives. */
export function stateOf(status: StatusSpec, task: Record<string, unknown>): { state: ProviderTaskState; rawStatus: string; code?: string; message?: string } {
  let state: ProviderTaskState;
  let rawStatus: string;
  let code: string | undefined;
  let message: string | undefined;
  const op = status.operation;
  if (op) {
    // A long-running operation: running until done; done with an error is its google.rpc.Status.
    const error = at(task, op.error);
    if (at(task, op.done) !== true) [state, rawStatus] = ['running', 'running'];
    else if (error && typeof error === 'object' && Object.keys(error).length > 0) {
      const c = typeof (error as Record<string, unknown>).code === 'number' ? String((error as Record<string, unknown>).code) : '2';
      [state, rawStatus] = [op.states?.[c] ?? 'failed', 'error'];
      code = op.codes?.[c] ?? c;
      message = text((error as Record<string, unknown>).message);
    } else [state, rawStatus] = ['succeeded', 'done'];
  } else {
    rawStatus = firstText(task, status.path ?? 'status');
    const entry = Object.hasOwn(status.map ?? {}, rawStatus) ? status.map![rawStatus] : undefined;
    state = typeof entry === 'string' ? entry : (entry?.state ?? 'unknown');
    if (typeof entry === 'object') [code, message] = [entry.code, entry.message];
    const by = status.by_code;
    const refined = state === 'failed' && by ? by.map[text(at(task, by.path))] : undefined;
    if (refined) state = refined;
  }
  return { state, rawStatus, code, message };
}

/** A provider's task object in neutral terms. */
export function viewTask(m: VideoManifest, task: Record<string, unknown>, now = Date.now()): ProviderTaskView {
  const spec = m.videos.task;
  const read = stateOf(spec.status, task);
  const rawStatus = read.rawStatus;
  let { state, code, message } = read;
  const updatedAtS = updatedAt(task, spec.updated_at);
  let result = state === 'succeeded' ? resultOf(task, spec.result, updatedAtS, now) : null;
  if (FAILING.has(state)) {
    code ??= textOf(task, spec.failure?.code);
    message ??= textOf(task, spec.failure?.message);
  }
  if (state === 'failed' || (state === 'succeeded' && !result)) {
    const mod = spec.moderation;
    if (mod && mod.any.some((t) => passes(at(task, t.path), t))) {
      state = 'failed';
      result = null;
      code = mod.code.replace(/\{([^{}]+)\}/g, (_, p: string) => text(at(task, p)));
      message = mod.message ? textOf(task, mod.message) : (message ?? textOf(task, spec.failure?.message));
    } else if (state === 'succeeded' && spec.result.missing) {
      state = 'failed';
      [code, message] = [spec.result.missing.code, spec.result.missing.message];
    }
  }
  const progress = spec.progress ? Number(at(task, spec.progress.path)) * (spec.progress.scale ?? 1) : NaN;
  return {
    state,
    rawStatus,
    result,
    errorCode: code ?? '',
    errorMessage: message ?? '',
    progress: Number.isFinite(progress) && spec.progress && !absent(at(task, spec.progress.path)) ? progress : null,
    usage: usageOf(task, spec.usage),
    updatedAtS,
  };
}
