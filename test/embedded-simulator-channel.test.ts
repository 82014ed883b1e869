import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startGateway, type TestGateway } from './helpers/gateway.js';

// The embedded default's simulator channel has no api_key in the config: every model it serves
// must still work through both SDKs, as in the README's quick start.
describe('the embedded simulator channel (no api_key configured)', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway();
    expect(gw.config.channels.find((c) => c.name === 'simulator')).toBeDefined();
  });
  afterAll(async () => gw.close());

  it('answers both chat formats for both chat models', async () => {
    const { key } = await gw.createKey();
    const openai = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const anthropic = new Anthropic({ apiKey: key, baseURL: gw.url, maxRetries: 0 });
    for (const model of ['sim-chat', 'sim-claude']) {
      const a = await openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'hello there' }] });
      expect(a.choices[0].message.content).toContain('hello there');
      const b = await anthropic.messages.create({ model, max_tokens: 50, messages: [{ role: 'user', content: 'hello there' }] });
      expect(b.content[0].type === 'text' && b.content[0].text).toContain('hello there');
    }
  });

  it('serves images and video tasks', async () => {
    const { key } = await gw.createKey();
    const openai = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const img = await openai.images.generate({ model: 'sim-image', prompt: 'a square', size: '256x256', response_format: 'b64_json' });
    expect(Buffer.from(img.data![0].b64_json!, 'base64').subarray(1, 4).toString()).toBe('PNG');
    const res = await fetch(`${gw.url}/v1/video/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'doubao-seedance-1-0-pro-250528', prompt: 'a corgi' }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).data.status).toBe('SUBMITTED');
  });
});
