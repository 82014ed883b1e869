import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { priceRuleProblem } from '../../config/price-rule.js';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { parse as parseYaml } from 'yaml';
import { fieldName } from '../../http/validation-message.js';
import schema from './manifest.schema.json' with { type: 'json' };
import type { Condition, ImageManifest, Manifest, VideoManifest } from './manifest.js';
import { imageProblems } from './image-check.js';
import { variants } from './request.js';
import { isRequestName, placeholders, TRANSFORMS } from './template.js';

// A manifest file read and checked: YAML, then the JSON Schema (manifest.schema.json), then what a
// schema cannot say (regular expressions that compile, placeholders and transforms that exist,
// model modes the provider serves). Every problem names the file, the field and what is allowed.

export class ManifestError extends Error {
  override name = 'ManifestError';
}

let compiled: ValidateFunction<Manifest> | undefined;
/** The schema check, compiled on first use: compiling it costs more CPU than every built-in manifest's parse. */
function validator(): ValidateFunction<Manifest> {
  compiled ??= new Ajv({ allErrors: true, verbose: true, strict: false }).compile<Manifest>(schema);
  return compiled;
}

const shown = (v: unknown) => (typeof v === 'string' ? `"${v}"` : JSON.stringify(v));

function describe(e: ErrorObject): string {
  const at = fieldName('(top level)', e.instancePath);
  switch (e.keyword) {
    case 'enum':
      return `${at}: must be one of ${(e.params.allowedValues as unknown[]).join(', ')} (got ${shown(e.data)})`;
    case 'const':
      return `${at}: must be ${shown(e.params.allowedValue)} (got ${shown(e.data)})`;
    case 'additionalProperties': {
      const allowed = Object.keys((e.parentSchema as { properties?: object }).properties ?? {});
      return `${at === '(top level)' ? '' : `${at}.`}${e.params.additionalProperty as string}: unknown field${allowed.length ? `; allowed: ${allowed.join(', ')}` : ''}`;
    }
    case 'required':
      return `${at === '(top level)' ? '' : `${at}.`}${e.params.missingProperty as string}: required`;
    case 'pattern':
      return `${at}: must match ${e.params.pattern as string} (got ${shown(e.data)})`;
    default:
      return `${at}: ${e.message ?? 'is not valid'}${e.data !== undefined && typeof e.data !== 'object' ? ` (got ${shown(e.data)})` : ''}`;
  }
}

/** The errors worth showing: the deepest ones, without the oneOf / anyOf summaries above them. */
function pick(errors: ErrorObject[]): ErrorObject[] {
  const leaf = errors.filter((e) => !['oneOf', 'anyOf', 'allOf', 'if'].includes(e.keyword));
  const list = leaf.length ? leaf : errors;
  const seen = new Set<string>();
  return list.filter((e) => {
    const k = describe(e);
    return !seen.has(k) && seen.add(k);
  });
}

function walkConditions(c: Condition, visit: (name: string) => void): void {
  for (const [name, test] of Object.entries(c)) {
    if (name === 'any') for (const sub of test as Condition[]) walkConditions(sub, visit);
    else visit(name);
  }
}

function walkStrings(t: unknown, visit: (s: string) => void): void {
  if (typeof t === 'string') visit(t);
  else if (Array.isArray(t)) t.forEach((x) => walkStrings(x, visit));
  else if (t && typeof t === 'object') Object.values(t).forEach((x) => walkStrings(x, visit));
}

/** What the schema cannot check of the video capability. */
function videoProblems(m: VideoManifest, regex: (field: string, source: string | undefined) => void): string[] {
  const out: string[] = [];
  regex('videos.task_id.pattern', m.videos.task_id.pattern);
  regex('videos.task_id.stored_pattern', m.videos.task_id.stored_pattern);
  regex('videos.task.result.download.file.pattern', m.videos.task.result.download?.file?.pattern);
  const maps = Object.keys(m.videos.maps ?? {});
  const checkTemplate = (field: string, t: unknown) =>
    walkStrings(t, (s) => {
      for (const p of placeholders(s)) {
        if (!isRequestName(p.name)) out.push(`${field}: unknown placeholder {${p.name}}; names: model, prompt, mode, callback_url, frame_size, images, image.<role>, images.<role>, metadata.<key>, facts.<name>, item, and the generation parameters`);
        for (const step of p.steps) {
          const [name, arg] = step.split(':');
          if (!(TRANSFORMS as readonly string[]).includes(name)) out.push(`${field}: unknown transform "${name}" in {${p.name}|${p.steps.join('|')}}; allowed: ${TRANSFORMS.join(', ')}`);
          else if (name === 'map' && !maps.includes(arg)) out.push(`${field}: map "${arg ?? ''}" is not in videos.maps (${maps.join(', ') || 'none'})`);
          else if (name === 'or' && !isRequestName(arg ?? '')) out.push(`${field}: unknown placeholder {${arg ?? ''}} after or: in {${p.name}|${p.steps.join('|')}}`);
        }
      }
    });
  variants(m).forEach((v, i) => {
    const at = Array.isArray(m.videos.create) ? `videos.create[${i}]` : 'videos.create';
    checkTemplate(`${at}.body`, v.body);
    checkTemplate(`${at}.path`, v.path);
    if (v.when) walkConditions(v.when, (n) => !isRequestName(n) && out.push(`${at}.when: unknown field "${n}"`));
    for (const k of ['per_call', 'encoding'] as const) if (v[k] !== undefined) out.push(`${at}.${k}: an images field; a video create takes none`);
  });
  (m.videos.rules ?? []).forEach((r, i) => walkConditions(r.when, (n) => !isRequestName(n) && out.push(`videos.rules[${i}].when: unknown field "${n}"`)));
  const usesBytes = variants(m).some((v) => JSON.stringify(v.body ?? {}).match(/\|(base64|mime|data_url)\b/));
  if (usesBytes && !m.videos.inline_images) out.push('videos.inline_images: required when a create body inlines images (|base64, |mime or |data_url)');
  const usesUploads = variants(m).some((v) => JSON.stringify(v.body ?? {}).includes('|uploaded'));
  if (usesUploads && !m.videos.upload_images) out.push('videos.upload_images: required when a create body sends uploaded image ids (|uploaded)');
  if (m.videos.upload_images && !m.videos.inline_images) out.push('videos.inline_images: required with videos.upload_images (the types of image the provider takes)');
  if (m.videos.upload_images && m.api.auth.scheme === 'hmac-v4') out.push('videos.upload_images: the hmac-v4 scheme cannot sign a multipart upload');
  [m.model_defaults, ...m.models].forEach((e, i) => {
    for (const mode of e?.modes ?? []) if (!m.videos.modes.includes(mode)) out.push(`${i === 0 ? 'model_defaults' : `models[${i - 1}]`}.modes: ${mode} is not in videos.modes (${m.videos.modes.join(', ')})`);
  });
  return out;
}

/** What the schema cannot check. */
function semanticProblems(m: Manifest): string[] {
  const out: string[] = [];
  const regex = (field: string, source: string | undefined) => {
    if (source === undefined) return;
    try {
      new RegExp(source);
    } catch {
      out.push(`${field}: not a regular expression (got "${source}")`);
    }
  };
  regex('simulator.claims.videos', m.simulator?.claims.videos);
  regex('simulator.claims.images', m.simulator?.claims.images);
  m.models.forEach((e, i) => {
    regex(`models[${i}].match`, e.match);
    const price = e.offer ? priceRuleProblem(e.image || !m.videos ? 'image' : 'video', e.offer.price) : null;
    if (price) out.push(`models[${i}].offer.price.${price.field}: ${price.message}`);
  });
  if (m.videos) out.push(...videoProblems(m as VideoManifest, regex));
  if (m.images) out.push(...imageProblems(m as ImageManifest));
  if (!m.videos && !m.images) out.push('videos, images: a manifest declares at least one capability');
  if ((m.api.auth.scheme === 'header' || m.api.auth.scheme === 'query') && !m.api.auth.name) out.push(`api.auth.name: required for the ${m.api.auth.scheme} scheme`);
  out.push(...accountProblems(m));
  return out;
}

/** What the schema cannot check of `balance` and `probe`. */
function accountProblems(m: Manifest): string[] {
  const out: string[] = [];
  (m.balance?.amounts ?? []).forEach((a, i) => {
    if (!a.unit && !a.unit_path) out.push(`balance.amounts[${i}]: unit or unit_path: one is required (the amount's unit or currency)`);
    if ((a.where || a.sum) && !a.items) out.push(`balance.amounts[${i}]: ${a.where ? 'where' : 'sum'} applies to a list: set items`);
  });
  for (const [k, v] of Object.entries(m.balance?.query ?? {})) {
    const left = v.replace(/\{now_ms\}|\{days_ago_ms:\d{1,4}\}/g, '');
    if (left.includes('{')) out.push(`balance.query.${k}: unknown placeholder in "${v}"; allowed: {now_ms}, {days_ago_ms:N}`);
  }
  const p = m.probe;
  if (p) {
    if ((p.task_id === undefined) === (p.path === undefined)) out.push('probe: set task_id (an unknown task read with videos.get) or path (a GET), one of them');
    if (p.task_id !== undefined && !m.videos) out.push('probe.task_id: reads a task with videos.get; this manifest has no videos');
    const stored = m.videos?.task_id.stored_pattern;
    if (p.task_id !== undefined && stored && !new RegExp(stored).test(p.task_id)) out.push(`probe.task_id: must match videos.task_id.stored_pattern ${stored} (got "${p.task_id}")`);
    if (p.from && p.path === undefined) out.push('probe.from: applies to probe.path only');
  }
  return out;
}

export interface LoadOptions {
  /**
   * A manifest shipped with the gateway: parsed without the checks, which the test suite runs on
   * every built-in manifest (test/unit/kit-manifest-errors.test.ts), so a start does not pay for them.
   */
  builtIn?: boolean;
}

/** A manifest from its YAML text; `file` names it in errors. */
export function parseManifest(text: string, file: string, opts: LoadOptions = {}): Manifest {
  let doc: unknown;
  try {
    doc = parseYaml(text, { merge: true });
  } catch (err) {
    throw new ManifestError(`${file}: not valid YAML: ${(err as Error).message}`);
  }
  if (opts.builtIn) return doc as Manifest;
  const check = validator();
  if (!check(doc)) throw new ManifestError(`${file}: ${pick(check.errors ?? []).map(describe).join('; ')}`);
  const problems = semanticProblems(doc);
  if (problems.length) throw new ManifestError(`${file}: ${problems.join('; ')}`);
  return doc;
}

/** A manifest file (a path, or a file: URL beside a module). */
export function loadManifest(file: string | URL, opts: LoadOptions = {}): Manifest {
  const path = file instanceof URL ? fileURLToPath(file) : file;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ManifestError(`${path}: cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  return parseManifest(text, path, opts);
}

