import { describe, expect, it } from 'vitest';
import { suiteGateway } from './helpers/suite-gateway.js';
import { embeddedDefault } from '../src/config-file/defaults.js';
import { encodePng } from '../src/simulator/png.js';

// The embedded default serves doubao-seedream-4-0-250828 from the in-process simulator; it must
// behave as Seedream does (docs/images.md): a mask is refused, the moderation marker refuses the
// images, and without a seed each call draws a new picture. That means the simulator's Ark route.

const SEEDREAM = 'doubao-seedream-4-0-250828';

describe('Seedream on the embedded default simulator channel', () => {
  const s = suiteGateway(() => {
    const def = embeddedDefault({}) as { channels: unknown[]; models: Record<string, unknown> };
    return { channels: def.channels, models: def.models };
  });

  const stats = async () => ((await (await fetch(`${s.gw.services.simulator!.url}/__sim/stats`)).json()) as { counts: Record<string, number> }).counts;

  async function generate(body: Record<string, unknown>) {
    const res = await fetch(`${s.gw.url}/v1/images/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: SEEDREAM, size: '32x32', response_format: 'b64_json', ...body }),
    });
    return { status: res.status, body: (await res.json()) as any };
  }

  it('generates through the Ark images route, a new picture per call without a seed', async () => {
    const a = await generate({ prompt: 'a paper boat' });
    const b = await generate({ prompt: 'a paper boat' });
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(a.body.data[0].b64_json).not.toBe(b.body.data[0].b64_json);
    const seeded = [await generate({ prompt: 'a paper boat', seed: 7 }), await generate({ prompt: 'a paper boat', seed: 7 })];
    expect(seeded[0].body.data[0].b64_json).toBe(seeded[1].body.data[0].b64_json);
    const counts = await stats();
    expect(counts['ark.images.generate']).toBe(4);
    expect(counts['openai.images.generate'] ?? 0).toBe(0);
  });

  it('refuses the images of a prompt with the moderation marker, and a mask', async () => {
    const flagged = await generate({ prompt: '[sim:sensitive] a boat' });
    expect(flagged.status).toBe(400);
    expect(JSON.stringify(flagged.body)).toContain('OutputImageSensitiveContentDetected');

    const png = encodePng(8, 8, new Uint8Array(8 * 8 * 3).fill(40));
    const form = new FormData();
    form.set('model', SEEDREAM);
    form.set('prompt', 'bluer');
    form.set('image', new Blob([png], { type: 'image/png' }), 'a.png');
    form.set('mask', new Blob([png], { type: 'image/png' }), 'm.png');
    const res = await fetch(`${s.gw.url}/v1/images/edits`, { method: 'POST', headers: { authorization: `Bearer ${s.key}` }, body: form });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).error).toMatchObject({ code: 'unsupported_parameter', param: 'mask' });
  });
});
