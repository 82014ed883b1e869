import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { post, startChatRig, type ChatRig } from './helpers/chat.js';

// An `ark` channel: OpenAI Chat Completions at {base_url}/api/v3/chat/completions, with Ark's own
// error body. The simulator answers there like Ark does.

describe('ark chat channel', () => {
  let rig: ChatRig;
  beforeAll(async () => {
    rig = await startChatRig({
      models: { 'doubao-sim': { kind: 'chat', owned_by: 'volcengine', price: { input_per_million: 1, output_per_million: 1 } } },
      channels: (sim) => [{ name: 'ark', type: 'ark', base_url: sim, api_key: 'ark-key', models: ['doubao-sim'], model_map: { 'doubao-sim': 'ep-20250101-sim' } }],
    });
  });
  afterAll(async () => rig.close());

  it('serves OpenAI and Anthropic clients through the Ark endpoint, with the channel\'s model_map', async () => {
    const oai = new OpenAI({ apiKey: rig.key, baseURL: `${rig.gw.url}/v1`, maxRetries: 0 });
    const c = await oai.chat.completions.create({ model: 'doubao-sim', messages: [{ role: 'user', content: 'Hello there' }] });
    expect(c.choices[0].message.content).toBe('You said: Hello there');
    expect(c.model).toBe('ep-20250101-sim');
    expect(c.usage).toMatchObject({ prompt_tokens: 2, completion_tokens: 5 });

    const ant = new Anthropic({ apiKey: rig.key, baseURL: rig.gw.url, maxRetries: 0 });
    const m = await ant.messages
      .stream({ model: 'doubao-sim', max_tokens: 100, messages: [{ role: 'user', content: 'Paris' }], tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }] })
      .finalMessage();
    expect(m.stop_reason).toBe('tool_use');
    expect(m.content.find((b) => b.type === 'tool_use')).toMatchObject({ name: 'get_weather', input: { city: 'Paris' } });
    expect((await rig.stats()).counts['ark.chat']).toBe(2);
  });

  it('reads Ark\'s error body when the upstream refuses', async () => {
    await rig.fault({ match: 'ark.chat', kind: 'status', status: 500, count: 1 });
    const res = await post(rig, '/v1/chat/completions', { model: 'doubao-sim', messages: [{ role: 'user', content: 'x' }] });
    expect(res.status).toBe(502);
    const body = (await res.json()) as any;
    expect(body.error.code).toBe('upstream_error');
    expect(body.error.message).toContain('injected fault 500');
  });
});
