import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { BYTEPLUS } from '../../src/providers/byteplus/videos.js';
import { ManifestError, loadManifest, parseManifest } from '../../src/providers/kit/load.js';

// A provider manifest that the schema or the kit refuses is a ManifestError naming the file, the
// field and what is allowed; the built-in manifests all load.

const base = () => ({
  type: 'acme',
  name: 'Acme Video',
  owned_by: 'acme',
  api: { base_path: '/v1', auth: { scheme: 'bearer' } },
  videos: {
    modes: ['text'],
    create: { path: '/tasks', body: { model: '{model}', prompt: '{prompt}' } },
    task_id: { path: 'id' },
    get: { path: '/tasks/{id}' },
    task: { status: { path: 'status', map: { done: 'succeeded' } }, result: { url: 'video.url' } },
    estimate: { unit: 'seconds', duration: 5 },
    lifetime: { seconds: 3600 },
  },
  models: [{ match: '', durations: [5] }],
});

function refusal(doc: unknown): string {
  try {
    parseManifest(stringify(doc), 'providers/acme.yaml');
  } catch (err) {
    expect(err).toBeInstanceOf(ManifestError);
    return (err as Error).message;
  }
  throw new Error('expected the manifest to be refused');
}

describe('provider manifest errors', () => {
  it('accepts the minimal manifest', () => {
    expect(parseManifest(stringify(base()), 'acme.yaml').type).toBe('acme');
  });

  it('names the file, the field and the allowed values of an enum', () => {
    const doc = base();
    (doc.api.auth as { scheme: string }).scheme = 'basic';
    const msg = refusal(doc);
    expect(msg).toMatch(/^providers\/acme\.yaml: /);
    expect(msg).toContain('api.auth.scheme: must be one of bearer, header, query, jwt-hs256, hmac-v4, google-service-account (got "basic")');
  });

  it('names an unknown field and the fields allowed there', () => {
    const doc = base() as Record<string, any>;
    doc.videos.task.result.urll = 'x';
    expect(refusal(doc)).toMatch(/videos\.task\.result\.urll: unknown field; allowed: url, expiry, download, missing/);
  });

  it('names a missing field', () => {
    const doc = base() as Record<string, any>;
    delete doc.videos.task_id;
    expect(refusal(doc)).toContain('videos.task_id: required');
  });

  it('names a list item by its index', () => {
    const doc = base() as Record<string, any>;
    doc.models.push({ id: 'x', modes: ['sideways'] });
    expect(refusal(doc)).toMatch(/models\[1\]\.modes\[0\]: must be one of text, first_frame, first_last_frame, reference_image \(got "sideways"\)/);
  });

  it('refuses unknown placeholders, transforms and maps in a template', () => {
    const doc = base() as Record<string, any>;
    doc.videos.create.body = { model: '{modle}', size: '{resolution|shout}', mode: '{resolution|map:nope}' };
    const msg = refusal(doc);
    expect(msg).toContain('videos.create.body: unknown placeholder {modle}');
    expect(msg).toMatch(/unknown transform "shout" .*allowed: upper, lower, string, number, map/);
    expect(msg).toContain('map "nope" is not in videos.maps');
  });

  it('refuses a regular expression that does not compile and a model mode the provider does not serve', () => {
    const doc = base() as Record<string, any>;
    doc.models = [{ match: '(' }, { id: 'm', modes: ['first_frame'] }];
    const msg = refusal(doc);
    expect(msg).toContain('models[0].match: not a regular expression (got "(")');
    expect(msg).toContain('models[1].modes: first_frame is not in videos.modes (text)');
  });

  it('requires inline_images when a body inlines image bytes', () => {
    const doc = base() as Record<string, any>;
    doc.videos.create.body.image = '{image.first_frame|base64}';
    expect(refusal(doc)).toContain('videos.inline_images: required');
  });

  it('requires upload_images (and the image types) when a body sends uploaded image ids, and refuses it with a body-signing scheme', () => {
    const doc = base() as Record<string, any>;
    doc.videos.create.body.img_id = '{image.first_frame|uploaded}';
    expect(refusal(doc)).toContain('videos.upload_images: required when a create body sends uploaded image ids');
    doc.videos.upload_images = { path: '/upload', field: 'image', id: 'img_id' };
    expect(refusal(doc)).toContain('videos.inline_images: required with videos.upload_images');
    doc.videos.inline_images = { types: ['image/png'] };
    expect(parseManifest(stringify(doc), 'acme.yaml').videos?.upload_images).toEqual({ path: '/upload', field: 'image', id: 'img_id' });
    doc.api.auth = { scheme: 'hmac-v4', vendor: 'aws' };
    expect(refusal(doc)).toContain('videos.upload_images: the hmac-v4 scheme cannot sign a multipart upload');
  });

  it('checks balance and probe: units, lists, placeholders, one probe kind, an id the reads accept', () => {
    const amount = { label: 'credits', path: 'balance' };
    expect(refusal({ ...base(), balance: { path: '/balance', amounts: [amount] } })).toBe('providers/acme.yaml: balance.amounts[0]: unit or unit_path: one is required (the amount\'s unit or currency)');
    expect(refusal({ ...base(), balance: { path: '/balance', amounts: [{ ...amount, unit: 'USD', sum: true }] } })).toMatch(/balance\.amounts\[0\]: sum applies to a list: set items/);
    expect(refusal({ ...base(), balance: { path: '/balance', query: { from: '{yesterday}' }, amounts: [{ ...amount, unit: 'USD' }] } })).toMatch(/balance\.query\.from: unknown placeholder in "\{yesterday\}"; allowed: \{now_ms\}, \{days_ago_ms:N\}/);
    expect(refusal({ ...base(), balance: { path: 'balance', amounts: [{ ...amount, unit: 'USD' }] } })).toMatch(/balance\.path/);
    expect(refusal({ ...base(), balance: { path: '/balance', amounts: [{ ...amount, unit: 'USD', colour: 'red' }] } })).toMatch(/balance\.amounts\[0\]\.colour: unknown field/);
    expect(refusal({ ...base(), probe: { healthy: [404] } })).toMatch(/probe: set task_id \(an unknown task read with videos\.get\) or path \(a GET\), one of them/);
    expect(refusal({ ...base(), probe: { task_id: 'x', path: '/x' } })).toMatch(/probe: set task_id/);
    expect(refusal({ ...base(), probe: { task_id: 'x', healthy: [500] } })).toMatch(/probe\.healthy/);
    const stored = base();
    (stored.videos.task_id as Record<string, unknown>).stored_pattern = '^t-[0-9]+$';
    expect(refusal({ ...stored, probe: { task_id: 'x' } })).toMatch(/probe\.task_id: must match videos\.task_id\.stored_pattern \^t-\[0-9\]\+\$ \(got "x"\)/);
    expect(parseManifest(stringify({ ...stored, probe: { task_id: 't-0', healthy: [404] }, balance: { path: '/balance', from: 'origin', query: { t: '{days_ago_ms:30}' }, amounts: [{ ...amount, items: 'packs', where: { state: ['on'] }, sum: true, unit: 'units' }] } }), 'acme.yaml').probe).toEqual({ task_id: 't-0', healthy: [404] });
  });

  it('says where the YAML is broken, and that a missing file cannot be read', () => {
    expect(() => parseManifest('type: [', 'bad.yaml')).toThrow(/^bad\.yaml: not valid YAML/);
    expect(() => loadManifest('/nonexistent/provider.yaml')).toThrow(/\/nonexistent\/provider\.yaml: cannot be read \(ENOENT\)/);
  });

  it.each(['ark', 'openai', 'gemini', 'kling', 'dashscope', 'minimax', 'vidu', 'runway', 'luma', 'pixverse', 'jimeng', 'fal', 'replicate', 'bfl'])('loads the built-in %s manifest', (type) => {
    expect(loadManifest(new URL(`../../src/providers/${type}/manifest.yaml`, import.meta.url)).type).toBe(type);
  });

  it('checks BytePlus as laid over Ark’s manifest: a whole manifest the schema accepts', () => {
    expect(parseManifest(stringify(BYTEPLUS), 'byteplus').type).toBe('byteplus');
  });
});
