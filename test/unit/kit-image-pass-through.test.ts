import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { parseManifest } from '../../src/providers/kit/load.js';
import { imageAdapter } from '../../src/providers/kit/image-adapter.js';
import { fateOf } from '../../src/providers/kit/image-request.js';
import { fill, type RequestScope } from '../../src/providers/kit/template.js';
import { GatewayError } from '../../src/http/errors.js';
import { UpstreamClient } from '../../src/upstream/client.js';
import { UpstreamFailure } from '../../src/upstream/failure.js';
import type { Target } from '../../src/upstream/target.js';
import type { ImageParams } from '../../src/providers/image-types.js';
import { encodePng } from '../../src/simulator/png.js';

// The images options that let a manifest speak OpenAI's own format and Seedream's: client fields
// passed on, dropped or refused (other_fields), variants that choose their own per_call and
// encoding, calls whose failures leave the others' images (partial), answer fields copied and
// usage reported in OpenAI's shape, and the json / single transforms. Against a small provider
// on port 0 that records what it receives.

const base = {
  type: 'echo',
  name: 'Echo',
  owned_by: 'echo',
  api: { auth: { scheme: 'bearer' }, errors: { message: 'error.message', code: ['error.code', 'error.type'] } },
};

const PASSING = parseManifest(
  stringify({
    ...base,
    images: {
      other_fields: { pass: '*', refuse: ['secret_field'] },
      create: [
        { name: 'edit-one', when: { operation: { in: ['edit'] }, images: { max: 1 } }, encoding: 'multipart', path: '/edits', body: { model: '{model}', prompt: '{prompt}', image: '{image|file}', mask: '{mask|file}' } },
        { name: 'edit-several', when: { operation: { in: ['edit'] } }, encoding: 'multipart', path: '/edits', body: { model: '{model}', prompt: '{prompt}', 'image[]': '{images|file}' } },
        { name: 'generate', path: '/generations', body: { model: '{model}', prompt: '{prompt}', n: '{n}', response_format: '{response_format}', user: '{user}' } },
      ],
      result: { items: 'data', url: 'url', b64: 'b64_json', revised_prompt: 'revised_prompt' },
      answer: { copy: ['created', 'usage', 'quality'] },
    },
    model_defaults: { image: { mask: true, max_images: 4 } },
    models: [{ match: '' }],
  }),
  'passing.yaml',
);

const GROUPING = parseManifest(
  stringify({
    ...base,
    images: {
      extra: ['mode', 'options', 'flag', 'seed'],
      other_fields: { drop: '*' },
      partial: true,
      create: [
        { name: 'group', when: { n: { min: 2 }, 'extra.mode': { in: ['group'] } }, per_call: 3, path: '/generations', body: { prompt: '{prompt}', count: '{n}', mode: 'group' } },
        {
          name: 'single',
          path: '/generations',
          body: { prompt: '{prompt}', count: '{n}', options: '{extra.options|json}', flag: '{extra.flag|json|or:facts.flag}', seed: '{extra.seed|json}', image: '{images|single}' },
        },
      ],
      result: { items: 'data', url: 'url' },
      usage: { unit: 'tokens', paths: ['usage.output_tokens'], report: true },
    },
    model_defaults: { facts: { flag: false }, image: { per_call: 1, max_images: 2 } },
    models: [{ match: '' }],
  }),
  'grouping.yaml',
);

interface Seen {
  url: string;
  type: string;
  body: string;
}

describe('kit images: pass-through, variants, partial answers and OpenAI-shaped answers', () => {
  let server: Server;
  let target: Target;
  let dir: string;
  const seen: Seen[] = [];
  const upstream = new UpstreamClient({ connectMs: 2000, firstByteMs: 5000, idleMs: 5000 });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kit-pass-'));
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('latin1');
        seen.push({ url: req.url ?? '', type: String(req.headers['content-type']), body });
        const answer = (status: number, v: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(v));
        if (req.url === '/edits') return answer(200, { created: 1700000001, data: [{ b64_json: 'aGk=' }] });
        const json = JSON.parse(body) as Record<string, unknown>;
        if (json.prompt === 'fail') return answer(500, { error: { message: 'boom', type: 'server_error', code: null } });
        if (json.prompt === 'flaky' && seen.filter((s) => s.body.includes('"flaky"')).length === 1) return answer(500, { error: { message: 'once' } });
        const count = typeof json.count === 'number' ? json.count : 1;
        answer(200, {
          created: 1700000000,
          data: Array.from({ length: count }, (_, i) => ({ url: `https://cdn.example/${i}.png`, revised_prompt: `drawn: ${String(json.prompt)}` })),
          usage: { output_tokens: 10 * count, total_tokens: 10 * count },
          quality: 'high',
          background: 'opaque',
        });
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    target = { channel: { name: 'e', type: 'echo' }, baseUrl: url, apiKey: 'echo-secret', upstreamModel: 'm1' } as Target;
  });
  afterAll(async () => {
    await upstream.close();
    await new Promise((r) => server.close(r));
    await rm(dir, { recursive: true, force: true });
  });

  const last = () => seen[seen.length - 1];
  const params = (p: Partial<ImageParams>): ImageParams => ({ prompt: 'a kite', extra: {}, ...p });

  it('passes every field the model does not describe on unchanged, under the template’s own', async () => {
    const got = await imageAdapter(PASSING).generate({ upstream }, target, params({ size: 'auto', quality: 'low', response_format: 'b64_json', user: 'u1', extra: { background: 'transparent', output_format: 'webp', model: 'not-this-one', moderation: 'low', image: ['not a url'] } }));
    // `image` too: no generation body of this manifest reads input images, so it is one of the other fields.
    expect(JSON.parse(last().body)).toEqual({ model: 'm1', prompt: 'a kite', n: 1, response_format: 'b64_json', user: 'u1', size: 'auto', quality: 'low', background: 'transparent', output_format: 'webp', moderation: 'low', image: ['not a url'] });
    expect(got).toMatchObject({ created: 1700000000, usage: { output_tokens: 10, total_tokens: 10 }, extra: { quality: 'high' } });
    expect(got.extra).not.toHaveProperty('background');
    expect(got.data).toEqual([{ url: 'https://cdn.example/0.png', revised_prompt: 'drawn: a kite' }]);
  });

  it('refuses a field other_fields names in refuse, though pass says *', async () => {
    const err = await imageAdapter(PASSING).generate({ upstream }, target, params({ extra: { secret_field: 'x' } })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect(err).toMatchObject({ status: 400, code: 'unsupported_parameter', param: 'secret_field' });
  });

  it('sends an edit as multipart: one upload as image, several as image[], passed fields as text parts', async () => {
    const file = join(dir, 'a.png');
    const png = encodePng(2, 2, new Uint8Array(12).fill(9));
    await writeFile(file, png);
    const img = { path: file, size: png.length, type: 'png' as const };
    await imageAdapter(PASSING).edit({ upstream }, target, { ...params({ extra: { input_fidelity: 'high' } }), images: [img], mask: img });
    expect(last().type).toMatch(/^multipart\/form-data; boundary=/);
    expect(last().body).toMatch(/name="image"; filename="image-1\.png"/);
    expect(last().body).toMatch(/name="mask"; filename=/);
    expect(last().body).toMatch(/name="input_fidelity"\r\n\r\nhigh\r\n/);
    // The upload is streamed from disk: its bytes arrive whole.
    expect(last().body).toContain(png.toString('latin1'));
    await imageAdapter(PASSING).edit({ upstream }, target, { ...params({}), images: [img, img] });
    expect(last().body.match(/name="image\[\]"; filename=/g)).toHaveLength(2);
  });

  it('drops what other_fields drops, reads text as JSON where the template says, and unwraps a list of one', async () => {
    const got = await imageAdapter(GROUPING).generate({ upstream }, target, params({ quality: 'hd', extra: { style: 'x', options: '{"mode":"fast"}', seed: '42', image: ['https://img.example/a.png'] } }));
    expect(JSON.parse(last().body)).toEqual({ prompt: 'a kite', count: 1, options: { mode: 'fast' }, flag: false, seed: 42, image: 'https://img.example/a.png' });
    expect(got.usage).toEqual({ input_tokens: 0, input_tokens_details: { text_tokens: 0, image_tokens: 0 }, output_tokens: 10, total_tokens: 10 });
    await imageAdapter(GROUPING).generate({ upstream }, target, params({ extra: { flag: 'true', options: 'not json' } }));
    expect(JSON.parse(last().body)).toMatchObject({ flag: true, options: 'not json' });
    const deep = `${'['.repeat(80)}${']'.repeat(80)}`;
    const err = await imageAdapter(GROUPING).generate({ upstream }, target, params({ extra: { options: deep } })).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 400, param: 'options' });
  });

  it('fans n out by the chosen variant’s per_call, and keeps the images of the calls that succeeded', async () => {
    const before = seen.length;
    const group = await imageAdapter(GROUPING).generate({ upstream }, target, params({ n: 5, extra: { mode: 'group' } }));
    expect(seen.slice(before).map((s) => JSON.parse(s.body).count)).toEqual([3, 2]);
    expect(group.data).toHaveLength(5);
    expect(group.usage).toMatchObject({ output_tokens: 50 });
    const mark = seen.length;
    const flaky = await imageAdapter(GROUPING).generate({ upstream }, target, params({ prompt: 'flaky', n: 3 }));
    expect(seen.length - mark).toBe(3);
    expect(flaky.data).toHaveLength(2);
    const failed = await imageAdapter(GROUPING).generate({ upstream }, target, params({ prompt: 'fail', n: 2 })).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(UpstreamFailure);
    expect(failed).toMatchObject({ status: 500, message: 'boom', providerCode: 'server_error' });
  });

  it('says what other_fields does with a field', () => {
    expect(fateOf(undefined, 'x')).toBe('refuse');
    expect(fateOf({ pass: '*' }, 'x')).toBe('pass');
    expect(fateOf({ pass: ['a'], drop: '*' }, 'a')).toBe('pass');
    expect(fateOf({ pass: ['a'], drop: '*' }, 'b')).toBe('drop');
    expect(fateOf({ pass: '*', refuse: ['b'] }, 'b')).toBe('refuse');
    expect(fateOf({ drop: ['a'] }, 'b')).toBe('refuse');
  });

  it('json and single leave other values alone', () => {
    const s = { model: 'm', req: { prompt: '', mode: 'text', images: [], params: {}, metadata: {} }, facts: {}, maps: {}, lookup: (n: string) => ({ a: 7, b: ['x'], c: ['x', 'y'], d: '12', e: '"quoted"' })[n] } as RequestScope;
    expect(fill({ a: '{a|json}', b: '{b|single}', c: '{c|single}', d: '{d|json}', e: '{e|json}' }, s)).toEqual({ a: 7, b: 'x', c: ['x', 'y'], d: 12, e: '"quoted"' });
  });

  it('refuses manifests that misuse the new fields, naming them', () => {
    const refusal = (doc: unknown) => {
      try {
        parseManifest(stringify(doc), 'bad.yaml');
        return '';
      } catch (err) {
        return (err as Error).message;
      }
    };
    const images = { create: { path: '/g', body: { prompt: '{prompt}' } }, result: { items: 'data', url: 'url' } };
    expect(refusal({ ...base, images: { ...images, other_fields: { pass: 'all' } }, models: [{ match: '' }] })).toContain('images.other_fields.pass');
    expect(refusal({ ...base, images: { ...images, answer: { copy: ['data'] } }, models: [{ match: '' }] })).toContain('images.answer.copy: data is the images themselves');
    expect(refusal({ ...base, images: { ...images, usage: { unit: 'images', paths: ['n'], report: true } }, models: [{ match: '' }] })).toContain('images.usage.report: reports tokens only');
    expect(refusal({ ...base, images: { ...images, create: { path: '/e', body: { image: '{image|file}' } } }, models: [{ match: '' }] })).toContain('the file transform needs encoding: multipart');
  });
});
