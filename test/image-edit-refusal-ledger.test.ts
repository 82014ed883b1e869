import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestGateway } from './helpers/gateway.js';
import { imageGateway, usageRows } from './helpers/images.js';
import { encodePng } from '../src/simulator/png.js';
import { startSimulator, type Simulator } from '../src/simulator/server.js';

// An image edit refused for its upload (a non-image file, no image at all) is recorded in the
// ledger under the model it named, like every other refused request.

describe('ledger rows of refused image edits', () => {
  let sim: Simulator;
  let gw: TestGateway;
  let key: string;
  let keyId: string;
  beforeAll(async () => {
    sim = await startSimulator({ port: 0 });
    gw = await imageGateway(sim);
    ({ key, id: keyId } = await gw.createKey({ creditMicros: 1_000_000 }));
  });
  afterAll(async () => {
    await gw.close();
    await sim.close();
  });

  async function edit(file: { data: Buffer; name: string } | null): Promise<number> {
    const f = new FormData();
    f.append('model', 'sim-image');
    f.append('prompt', 'make it blue');
    if (file) f.append('image', new Blob([file.data], { type: 'image/png' }), file.name);
    const res = await fetch(`${gw.url}/v1/images/edits`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: f });
    await res.arrayBuffer();
    return res.status;
  }

  it('keeps the model named for a non-image file and for a missing image', async () => {
    expect(await edit({ data: Buffer.from('plain text, not a picture'), name: 'fake.png' })).toBe(400);
    expect(await edit(null)).toBe(400);
    expect(await edit({ data: encodePng(4, 4, new Uint8Array(48).fill(7)), name: 'ok.png' })).toBe(200);
    const rows = await usageRows(gw, keyId);
    expect(rows.map((r) => [r.status, r.model, r.endpoint])).toEqual([
      [400, 'sim-image', 'images.edits'],
      [400, 'sim-image', 'images.edits'],
      [200, 'sim-image', 'images.edits'],
    ]);
  });
});
