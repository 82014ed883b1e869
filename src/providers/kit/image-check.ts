import type { Condition, ImageManifest } from './manifest.js';
import { isImageName } from './image-adapter.js';
import { placeholders, TRANSFORMS } from './template.js';

// What the schema cannot check of a manifest's images capability: placeholders and transforms that
// exist, maps that are declared, regular expressions that compile, a task read to poll.

function walkStrings(t: unknown, visit: (s: string) => void): void {
  if (typeof t === 'string') visit(t);
  else if (Array.isArray(t)) t.forEach((x) => walkStrings(x, visit));
  else if (t && typeof t === 'object') Object.values(t).forEach((x) => walkStrings(x, visit));
}

function conditionNames(c: Condition, visit: (name: string) => void): void {
  for (const [name, test] of Object.entries(c)) {
    if (name === 'any') for (const sub of test as Condition[]) conditionNames(sub, visit);
    else visit(name);
  }
}

export function imageProblems(m: ImageManifest): string[] {
  const out: string[] = [];
  const i = m.images;
  const maps = Object.keys(i.maps ?? {});
  const names = 'model, prompt, n, operation, size, width, height, aspect_ratio, resolution, quality, seed, negative_prompt, output_format, response_format, user, images, images.<i>, image, mask, extra.<name>, facts.<name>, item';
  const check = (field: string, t: unknown) =>
    walkStrings(t, (s) => {
      for (const p of placeholders(s)) {
        if (!isImageName(p.name)) out.push(`${field}: unknown placeholder {${p.name}}; names: ${names}`);
        if (p.name.startsWith('extra.') && !(i.extra ?? []).includes(p.name.slice(6).split('.')[0])) out.push(`${field}: {${p.name}} is not in images.extra (${(i.extra ?? []).join(', ') || 'none'})`);
        for (const step of p.steps) {
          const [name, arg] = step.split(':');
          if (!(TRANSFORMS as readonly string[]).includes(name)) out.push(`${field}: unknown transform "${name}" in {${p.name}|${p.steps.join('|')}}; allowed: ${TRANSFORMS.join(', ')}`);
          else if (name === 'map' && !maps.includes(arg)) out.push(`${field}: map "${arg ?? ''}" is not in images.maps (${maps.join(', ') || 'none'})`);
        }
      }
    });
  const variants = Array.isArray(i.create) ? i.create : [i.create];
  variants.forEach((v, n) => {
    const at = Array.isArray(i.create) ? `images.create[${n}]` : 'images.create';
    check(`${at}.body`, v.body);
    check(`${at}.path`, v.path);
    if (v.when) conditionNames(v.when, (name) => !isImageName(name) && out.push(`${at}.when: unknown field "${name}"`));
  });
  (i.rules ?? []).forEach((r, n) => conditionNames(r.when, (name) => !isImageName(name) && out.push(`images.rules[${n}].when: unknown field "${name}"`)));
  if (i.task?.id.pattern) {
    try {
      new RegExp(i.task.id.pattern);
    } catch {
      out.push(`images.task.id.pattern: not a regular expression (got "${i.task.id.pattern}")`);
    }
  }
  variants.forEach((v, n) => {
    if ((v.encoding ?? i.encoding) !== 'multipart' && JSON.stringify(v.body ?? {}).includes('|file')) out.push(`${Array.isArray(i.create) ? `images.create[${n}]` : 'images.create'}: the file transform needs encoding: multipart`);
  });
  if (i.answer?.copy.includes('data')) out.push('images.answer.copy: data is the images themselves, read by images.result');
  if (i.usage?.report && i.usage.unit !== 'tokens') out.push('images.usage.report: reports tokens only (unit: tokens)');
  return out;
}
