import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddedDefault } from '../src/config-file/defaults.js';
import { PROVIDERS } from '../src/providers/index.js';
import { startGateway, type TestGateway } from './helpers/gateway.js';
import { IMG, createTask, waitForTask } from './helpers/video.js';

// The embedded default offers video models of every provider type offline: GET /v1/models lists
// those of at least twelve distinct provider types (the type whose defaults offer the model; two
// types may share an owner, as Veo on the Gemini API and on Vertex AI), and a task on one model of
// each, in its first mode (text where it has it), reaches SUCCESS through that provider's simulator part.

describe('video providers on the embedded default', () => {
  let gw: TestGateway;
  let key: string;
  beforeAll(async () => {
    const d = embeddedDefault({});
    gw = await startGateway({ channels: d.channels, models: d.models });
    key = (await gw.createKey()).key;
  });
  afterAll(async () => gw.close());

  it('lists video models of at least twelve providers and runs one task of each to SUCCESS', async () => {
    const list = (await (await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).json()) as any;
    const config = embeddedDefault({}).models as Record<string, { modes?: string[] }>;
    const modes = (id: string): string[] => config[id]?.modes ?? ['text'];
    const typeOf = (id: string) => PROVIDERS.find((p) => Object.hasOwn(p.defaults.models, id))?.type ?? 'unknown';
    const byOwner = new Map<string, any>();
    for (const m of list.data) {
      if (!m.supported_endpoint_types?.includes('openai-video')) continue;
      const had = byOwner.get(typeOf(m.id));
      if (!had || (!modes(had.id).includes('text') && modes(m.id).includes('text'))) byOwner.set(typeOf(m.id), m);
    }
    expect([...byOwner.keys()].length, [...byOwner.keys()].join(', ')).toBeGreaterThanOrEqual(12);
    const images: Record<string, unknown[]> = {
      text: [],
      first_frame: [{ url: IMG(1), role: 'first_frame' }],
      first_last_frame: [{ url: IMG(1), role: 'first_frame' }, { url: IMG(2), role: 'last_frame' }],
      reference_image: [{ url: IMG(3), role: 'reference_image' }],
    };
    const records = await Promise.all(
      [...byOwner.values()].map(async (m) => {
        const mode = modes(m.id).includes('text') ? 'text' : modes(m.id)[0];
        const created = await createTask(gw.url, key, { model: m.id, prompt: 'a corgi', images: images[mode] });
        expect(created.status, `${m.id}: ${JSON.stringify(created.body)}`).toBe(200);
        return waitForTask(gw.url, key, created.body.data.task_id, (r) => r.status === 'SUCCESS' || r.status === 'FAILURE');
      }),
    );
    records.forEach((r, i) => expect(r.status, `${[...byOwner.values()][i].id}: ${r.fail_reason}`).toBe('SUCCESS'));
  });
});
