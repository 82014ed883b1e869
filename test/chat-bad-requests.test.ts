import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post, startChatRig, type ChatRig } from './helpers/chat.js';

// Requests the chat endpoints must refuse, each with a 4xx in its family's shape (OpenAI for
// /v1/chat/completions, Anthropic for /v1/messages), never a 500.

describe('chat requests the gateway refuses', () => {
  let rig: ChatRig;
  beforeAll(async () => {
    rig = await startChatRig();
  });
  afterAll(async () => rig.close());

  const openaiCases: [string, unknown, number, string][] = [
    ['no messages', { model: 'gpt-sim', messages: [] }, 400, 'invalid_request'],
    ['messages of the wrong type', { model: 'gpt-sim', messages: 'hi' }, 400, 'invalid_request'],
    ['an unknown role', { model: 'gpt-sim', messages: [{ role: 'wizard', content: 'x' }] }, 400, 'invalid_request'],
    ['content of the wrong type', { model: 'gpt-sim', messages: [{ role: 'user', content: 42 }] }, 400, 'invalid_request'],
    ['a string max_tokens', { model: 'gpt-sim', messages: [{ role: 'user', content: 'x' }], max_tokens: '10' }, 400, 'invalid_request'],
    ['a temperature above 2', { model: 'gpt-sim', messages: [{ role: 'user', content: 'x' }], temperature: 3 }, 400, 'invalid_request'],
    ['a numeric stream flag', { model: 'gpt-sim', messages: [{ role: 'user', content: 'x' }], stream: 1 }, 400, 'invalid_request'],
    ['no model', { messages: [{ role: 'user', content: 'x' }] }, 400, 'invalid_request'],
    ['an unknown model', { model: 'nope', messages: [{ role: 'user', content: 'x' }] }, 404, 'model_not_found'],
    ['an image model', { model: 'sim-image', messages: [{ role: 'user', content: 'x' }] }, 400, 'invalid_request'],
    ['audio for an Anthropic channel', { model: 'claude-sim', messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AA', format: 'wav' } }] }] }, 400, 'invalid_request'],
    ['n > 1 for an Anthropic channel', { model: 'claude-sim', n: 2, messages: [{ role: 'user', content: 'x' }] }, 400, 'invalid_request'],
  ];

  it.each(openaiCases)('answers %s on /v1/chat/completions in the OpenAI shape', async (_name, body, status, code) => {
    const res = await post(rig, '/v1/chat/completions', body);
    expect(res.status).toBe(status);
    const json = (await res.json()) as any;
    expect(json.error).toMatchObject({ code });
    expect(typeof json.error.message).toBe('string');
  });

  const anthropicCases: [string, unknown, number, string][] = [
    ['no max_tokens', { model: 'claude-sim', messages: [{ role: 'user', content: 'x' }] }, 400, 'invalid_request_error'],
    ['a system role message', { model: 'claude-sim', max_tokens: 5, messages: [{ role: 'system', content: 'x' }] }, 400, 'invalid_request_error'],
    ['a temperature above 1', { model: 'claude-sim', max_tokens: 5, temperature: 1.5, messages: [{ role: 'user', content: 'x' }] }, 400, 'invalid_request_error'],
    ['blocks without a type', { model: 'claude-sim', max_tokens: 5, messages: [{ role: 'user', content: [{ text: 'x' }] }] }, 400, 'invalid_request_error'],
    ['an unknown model', { model: 'nope', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }, 404, 'not_found_error'],
    ['an image model', { model: 'sim-image', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }, 400, 'invalid_request_error'],
    ['a server tool for an OpenAI channel', { model: 'gpt-sim', max_tokens: 5, tools: [{ name: 'web_search', type: 'web_search_20250305' }], messages: [{ role: 'user', content: 'x' }] }, 400, 'invalid_request_error'],
  ];

  it.each(anthropicCases)('answers %s on /v1/messages in the Anthropic shape', async (_name, body, status, type) => {
    const res = await post(rig, '/v1/messages', body);
    expect(res.status).toBe(status);
    const json = (await res.json()) as any;
    expect(json).toMatchObject({ type: 'error', error: { type } });
    expect(typeof json.error.message).toBe('string');
  });

  it('answers 403 model_not_allowed to a key limited to other models, in both shapes', async () => {
    const { key } = await rig.gw.createKey({ models: ['gpt-sim'] });
    const a = await post(rig, '/v1/chat/completions', { model: 'claude-sim', messages: [{ role: 'user', content: 'x' }] }, key);
    expect(a.status).toBe(403);
    expect(((await a.json()) as any).error.code).toBe('model_not_allowed');
    const b = await post(rig, '/v1/messages', { model: 'claude-sim', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }, key);
    expect(b.status).toBe(403);
    expect(await b.json()).toMatchObject({ type: 'error', error: { type: 'permission_error' } });
    const ok = await post(rig, '/v1/chat/completions', { model: 'gpt-sim', messages: [{ role: 'user', content: 'x' }] }, key);
    expect(ok.status).toBe(200);
  });

  it('answers a body that is not JSON with 400, and the key is never echoed', async () => {
    const res = await fetch(`${rig.gw.url}/v1/messages`, { method: 'POST', headers: { 'x-api-key': rig.key, 'content-type': 'application/json' }, body: '{"model":' });
    expect(res.status).toBe(400);
    const text = await res.text();
    expect(JSON.parse(text)).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    expect(text).not.toContain(rig.key);
  });

  it('passes the provider\'s own 400 back as a 400 in the client\'s shape', async () => {
    // The Anthropic simulator, like Anthropic, refuses a tool_result with no matching tool_use.
    const res = await post(rig, '/v1/messages', {
      model: 'claude-sim',
      max_tokens: 5,
      messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_missing', content: 'x' }] }],
    });
    expect(res.status).toBe(400);
    const json = (await res.json()) as any;
    expect(json).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    expect(json.error.message).toContain('tool_use_id');
  });
});
