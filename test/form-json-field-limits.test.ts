import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddedDefault } from '../src/config-file/defaults.js';
import { encodePng } from '../src/simulator/png.js';
import { startGateway, usageRowsOf, type TestGateway } from './helpers/gateway.js';
import { errorShapeProblem } from './helpers/error-shapes.js';

// JSON a client sends inside a field — a multipart `metadata` of POST /v1/videos, Seedream's
// `optimize_prompt_options` in an image edit form, tool-call arguments and tool results in a chat
// history — gets the limits of a JSON body: at most 64 levels deep and no prototype keys. A bad
// field is a 400 naming it in the route's error shape; nothing is created or charged.

/** JSON text nested `depth` levels deep (the outer object included). */
function nested(depth: number): string {
  return `{"a":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;
}

function form(fields: Record<string, string | Blob>): FormData {
  const f = new FormData();
  for (const [k, v] of Object.entries(fields)) f.append(k, v);
  return f;
}

describe('JSON inside request fields', () => {
  let gw: TestGateway;
  let key = '';
  beforeAll(async () => {
    const d = embeddedDefault({}) as { channels: any[]; models: Record<string, any> };
    // A chat model whose simulator channel speaks Anthropic: the gateway turns an OpenAI history into it.
    d.models['sim-via-anthropic'] = { kind: 'chat', owned_by: 'simulator', price: { input_per_million: 1, output_per_million: 2 } };
    d.models['sim-via-gemini'] = { kind: 'chat', owned_by: 'simulator', price: { input_per_million: 1, output_per_million: 2 } };
    d.channels.push({ name: 'sim-anthropic', type: 'simulator', upstream_format: 'anthropic', models: ['sim-via-anthropic'] });
    d.channels.push({ name: 'sim-gemini', type: 'simulator', upstream_format: 'gemini', models: ['sim-via-gemini'] });
    gw = await startGateway({ channels: d.channels, models: d.models });
    ({ key } = await gw.createKey({ creditMicros: 10_000_000 }));
  });
  afterAll(async () => gw.close());

  const post = async (path: string, body: FormData | Record<string, unknown>, as = key) => {
    const res = await fetch(`${gw.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${as}`, ...(body instanceof FormData ? {} : { 'content-type': 'application/json' }) },
      body: body instanceof FormData ? body : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  /**
   * The answer of a request that must leave no task behind and be recorded as one uncharged 400
   * (sent with a key of its own).
   */
  const refused = async (path: string, body: FormData | Record<string, unknown>) => {
    const own = await gw.createKey({ creditMicros: 1_000_000 });
    const r = await post(path, body, own.key);
    const tasks = await gw.services.store.db.selectFrom('tasks').select('task_id').where('key_id', '=', own.id).execute();
    expect(tasks).toEqual([]);
    const rows = await usageRowsOf(gw.services, own.id);
    expect(rows.map((u) => [u.status, Number(u.cost_micros)])).toEqual([[400, 0]]);
    return r;
  };

  describe('POST /v1/videos multipart metadata', () => {
    it('refuses a metadata field nested 60,000 deep with a 400 naming metadata', async () => {
      const r = await refused('/v1/videos', form({ model: 'sim-video', prompt: 'waves', metadata: nested(60_000) }));
      expect(r.status, JSON.stringify(r.body).slice(0, 300)).toBe(400);
      expect(errorShapeProblem('openai', r.body)).toBeNull();
      expect(r.body.error.param).toBe('metadata');
      expect(r.body.error.message).toBe('metadata is nested deeper than 64 levels (counting the request as one JSON body).');
    });

    it('draws the line where a JSON body does: 63 levels inside the form pass, 64 do not', async () => {
      const ok = await post('/v1/videos', form({ model: 'sim-video', prompt: 'waves', metadata: nested(63) }));
      expect(ok.body.error?.message ?? '').not.toMatch(/nested deeper/);
      const deep = await refused('/v1/videos', form({ model: 'sim-video', prompt: 'waves', metadata: nested(64) }));
      expect(deep.status).toBe(400);
      expect(deep.body.error.param).toBe('metadata');
      // The same metadata in a JSON body meets the same limit.
      const json = await refused('/v1/videos', { model: 'sim-video', prompt: 'waves', metadata: JSON.parse(nested(64)) });
      expect(json.status).toBe(400);
    });

    it('refuses bracketed field names nested past the limit', async () => {
      const r = await refused('/v1/videos', form({ model: 'sim-video', prompt: 'waves', [`metadata${'[a]'.repeat(64)}`]: 'x' }));
      expect(r.status).toBe(400);
      expect(r.body.error.param).toBe('metadata');
      const ok = await post('/v1/videos', form({ model: 'sim-video', prompt: 'waves', [`metadata${'[a]'.repeat(63)}`]: 'x' }));
      expect(ok.body.error?.message ?? '').not.toMatch(/nested deeper/);
    });

    it('refuses a prototype key in metadata, as a JSON body does', async () => {
      const r = await refused('/v1/videos', form({ model: 'sim-video', prompt: 'waves', metadata: '{"__proto__":{"x":1}}' }));
      expect(r.status).toBe(400);
      expect(r.body.error.param).toBe('metadata');
      expect(r.body.error.message).toBe('metadata sent as one form field must be a JSON object.');
    });
  });

  describe('POST /v1/images/edits (Seedream) optimize_prompt_options', () => {
    it('refuses the field nested 60,000 deep with a 400 naming it', async () => {
      const png = new Blob([encodePng(8, 8, new Uint8Array(8 * 8 * 3).fill(90))], { type: 'image/png' });
      const f = form({ model: 'doubao-seedream-4-0-250828', prompt: 'a boat', optimize_prompt_options: nested(60_000) });
      f.append('image', png, 'a.png');
      const r = await refused('/v1/images/edits', f);
      expect(r.status, JSON.stringify(r.body).slice(0, 300)).toBe(400);
      expect(errorShapeProblem('openai', r.body)).toBeNull();
      expect(r.body.error.param).toBe('optimize_prompt_options');
      expect(r.body.error.message).toMatch(/^optimize_prompt_options is nested deeper than 64 levels/);
    });
  });

  describe('chat history converted to another wire format', () => {
    const deepArgs = nested(60_000);
    const history = (model: string) => ({
      model,
      messages: [
        { role: 'user', content: 'weather?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: deepArgs } }] },
        { role: 'tool', tool_call_id: 'call_1', content: deepArgs },
      ],
      tools: [{ type: 'function', function: { name: 'weather', parameters: { type: 'object', properties: {} } } }],
    });

    it('refuses tool-call arguments nested 60,000 deep with a 400 naming them (Anthropic upstream)', async () => {
      const r = await refused('/v1/chat/completions', history('sim-via-anthropic'));
      expect(r.status, JSON.stringify(r.body).slice(0, 300)).toBe(400);
      expect(errorShapeProblem('openai', r.body)).toBeNull();
      expect(r.body.error.param).toBe('messages[1].tool_calls[0].function.arguments');
      expect(r.body.error.message).toMatch(/nested deeper than 64 levels/);
    });

    it('refuses them on the way to Gemini too, and a deep tool result alone is sent as text', async () => {
      const r = await refused('/v1/chat/completions', history('sim-via-gemini'));
      expect(r.status).toBe(400);
      expect(r.body.error.param).toBe('messages[1].tool_calls[0].function.arguments');
      const resultOnly = history('sim-via-gemini');
      resultOnly.messages[1].tool_calls![0].function.arguments = '{"city":"Paris"}';
      const ok = await post('/v1/chat/completions', resultOnly);
      expect(ok.status, JSON.stringify(ok.body).slice(0, 300)).toBe(200);
    });
  });
});
