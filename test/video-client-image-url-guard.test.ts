import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { embeddedDefault } from '../src/config-file/defaults.js';
import { VEO_DEFAULT_MODELS } from '../src/providers/gemini/models.js';
import { startGateway, type TestGateway } from './helpers/gateway.js';
import { balanceOf, providerRig, type ProviderRig } from './helpers/provider-video.js';
import { createTask, waitForTask } from './helpers/video.js';

// A client's image URL is fetched by the gateway for Veo (which takes base64 only). Whatever the
// channel, the URL goes through the address guard: `allow_private_network` is about URLs a
// provider hands the gateway, never a client's. The one loopback URL a client may give is a
// simulator channel's own image file (what its image generations return). A refused URL reads the
// same whether a service, the admin API or nothing listens there.

const VEO = 'veo-3.1-fast-generate-preview';
const REFUSED = 'images[0] could not be fetched: the host is not, or does not resolve to, a public address.';

async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

describe('client image URLs on the embedded simulator channel (Veo)', () => {
  let gw: TestGateway;
  let simUrl = '';
  let images: Server;
  let imageBase = '';
  let imageHits = 0;
  beforeAll(async () => {
    const d = embeddedDefault({});
    gw = await startGateway({ channels: d.channels, models: d.models, admin: { enabled: true } });
    simUrl = String(gw.config.channels.find((c) => c.type === 'simulator')?.base_url);
    // A service on loopback that would answer with a real image.
    images = createServer((req, res) => {
      imageHits++;
      res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.from('89504e470d0a1a0a', 'hex'));
    });
    await new Promise<void>((r) => images.listen(0, '127.0.0.1', () => r()));
    imageBase = `http://127.0.0.1:${(images.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await gw.close();
    await new Promise((r) => images.close(r));
  });

  it('refuses loopback URLs with one answer, whatever listens there, and holds no credit', async () => {
    const { id, key } = await gw.createKey({ creditMicros: 5_000_000 });
    const port = new URL(gw.url).port;
    const urls = [
      `${gw.url}/no-such-page.png`, // an open port answering 404
      `${gw.url}/admin/api/keys`, // the admin API answering 401
      `http://127.0.0.1:${await closedPort()}/x.png`, // nothing listening
      `http://localhost:${port}/x.png`, // a name resolving to loopback
      `http://[::ffff:0:7f00:1]:${port}/x.png`, // an IPv4-translated loopback
      `${imageBase}/frame.png`, // a loopback service with a real image
      `${simUrl}/__sim/stats`, // the simulator itself, outside its image files
    ];
    for (const url of urls) {
      const r = await createTask(gw.url, key, { model: VEO, prompt: 'move', images: [url] });
      expect(r.status, `${url}: ${JSON.stringify(r.body)}`).toBe(400);
      expect(r.body.message, url).toBe(REFUSED);
    }
    expect(imageHits).toBe(0);
    expect(await balanceOf(gw, id)).toBe(5_000_000);
  });

  it("fetches the simulator's own image file and runs the task to SUCCESS", async () => {
    const { key } = await gw.createKey();
    const file = `${simUrl}/__sim/files/16x16-00000003.png`;
    const created = await createTask(gw.url, key, { model: VEO, prompt: 'move', images: [file] });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const done = await waitForTask(gw.url, key, created.body.data.task_id, (r) => r.status === 'SUCCESS' || r.status === 'FAILURE');
    expect(done.status, done.fail_reason).toBe('SUCCESS');
    // Dot segments cannot walk out of the files path.
    const escaped = await createTask(gw.url, key, { model: VEO, prompt: 'move', images: [`${simUrl}/__sim/files/../stats`] });
    expect(escaped.body.message).toBe(REFUSED);
  });
});

describe('client image URLs on a channel with allow_private_network', () => {
  let rig: ProviderRig;
  beforeAll(async () => {
    rig = await providerRig('gemini', VEO_DEFAULT_MODELS);
  });
  afterAll(async () => rig.close());

  it("refuses a loopback URL, the simulator's image files included (only a simulator channel's own)", async () => {
    expect(rig.gw.config.channels[0].allow_private_network).toBe(true);
    const { key } = await rig.gw.createKey();
    for (const url of [`${rig.sim.url}/__sim/files/16x16-00000003.png`, `http://127.0.0.1:${await closedPort()}/x.png`]) {
      const r = await createTask(rig.gw.url, key, { model: VEO, prompt: 'move', images: [url] });
      expect(r.status, url).toBe(400);
      expect(r.body.message, url).toBe(REFUSED);
    }
  });
});
