import { describe, expect, it } from 'vitest';
import { CHAT_CODECS, streamErrorFrame } from '../../src/formats/index.js';
import { DEFAULT_ANTHROPIC_MAX_TOKENS } from '../../src/formats/anthropic/request.js';
import { ConvertingStream } from '../../src/formats/hub/convert-stream.js';
import type { HubRequest } from '../../src/formats/hub/types.js';
import { OpenAIPassthroughStream, openaiChatRequest } from '../../src/formats/openai-chat/passthrough.js';
import { AnthropicPassthroughStream } from '../../src/formats/anthropic/passthrough.js';
import type { StreamTranslator } from '../../src/formats/chat-stream.js';
import { GatewayError } from '../../src/http/errors.js';
import { UpstreamFailure } from '../../src/upstream/failure.js';
import { SseReader, dataFrame, eventFrame } from '../../src/formats/sse.js';

// The conversions between Chat Completions and Anthropic Messages on their own, both directions:
// each is one format's codec decoding into the hub and the other's encoding out of it.

const PLAIN: HubRequest = { model: 'm', system: [], messages: [], tools: [], stop: [], stream: false };
const openaiToAnthropicRequest = (req: any) => CHAT_CODECS.anthropic.encodeRequest(CHAT_CODECS.openai.decodeRequest(req), req.model) as any;
const anthropicToOpenAIRequest = (req: any) => CHAT_CODECS.openai.encodeRequest(CHAT_CODECS.anthropic.decodeRequest(req), req.model) as any;
const openaiToAnthropicResponse = (c: any) => CHAT_CODECS.anthropic.encodeResponse(CHAT_CODECS.openai.decodeResponse(JSON.stringify(c), PLAIN), { model: c.model, includeUsage: false }) as any;
const anthropicToOpenAIResponse = (m: any, created: number) => ({ ...(CHAT_CODECS.openai.encodeResponse(CHAT_CODECS.anthropic.decodeResponse(JSON.stringify(m), PLAIN), { model: m.model, includeUsage: false }) as any), created });
class OpenAIToAnthropicStream extends ConvertingStream {
  constructor(model: string) {
    super(CHAT_CODECS.openai.streamDecoder(PLAIN), CHAT_CODECS.anthropic.streamEncoder({ model, includeUsage: false }));
  }
}
class AnthropicToOpenAIStream extends ConvertingStream {
  constructor(model: string, includeUsage: boolean) {
    super(CHAT_CODECS.anthropic.streamDecoder(PLAIN), CHAT_CODECS.openai.streamEncoder({ model, includeUsage }));
  }
}

/** Runs events through a translator and parses what the client would get. */
function run(t: StreamTranslator, events: { event?: string; data: string }[]): { frames: { event?: string; data: string }[]; raw: string } {
  let raw = '';
  for (const ev of events) raw += t.push(ev);
  const tail = t.end();
  if (tail) raw += tail;
  const frames = raw
    .split('\n\n')
    .filter(Boolean)
    .map((f) => {
      const lines = f.split('\n');
      const event = lines.find((l) => l.startsWith('event: '))?.slice(7);
      const data = lines
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice(6))
        .join('\n');
      return { event, data };
    });
  return { frames, raw };
}

const chunk = (delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}) => ({
  data: JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-x', choices: [{ index: 0, delta, finish_reason: finish }], ...extra }),
});
const ev = (type: string, body: Record<string, unknown> = {}) => ({ event: type, data: JSON.stringify({ type, ...body }) });

describe('OpenAI request → Anthropic request', () => {
  it('lifts system and developer messages, keeps text, images and sampling', () => {
    const out = openaiToAnthropicRequest({
      model: 'm',
      messages: [
        { role: 'system', content: 'Rule one.' },
        { role: 'developer', content: [{ type: 'text', text: 'Rule two.' }] },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: 'https://x.test/a.png' } },
            { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/4AAQ' } },
          ],
        },
      ],
      temperature: 1.7,
      top_p: 0.9,
      stop: 'END',
      max_tokens: 123,
      stream: true,
      user: 'u-1',
      seed: 7,
      presence_penalty: 1,
    });
    expect(out).toEqual({
      model: 'm',
      system: [
        { type: 'text', text: 'Rule one.' },
        { type: 'text', text: 'Rule two.' },
      ],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image', source: { type: 'url', url: 'https://x.test/a.png' } },
            { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/4AAQ' } },
          ],
        },
      ],
      max_tokens: 123,
      stream: true,
      temperature: 1,
      top_p: 0.9,
      stop_sequences: ['END'],
      metadata: { user_id: 'u-1' },
    });
  });

  it('defaults max_tokens, prefers max_completion_tokens, uses a string system for one prompt', () => {
    expect(openaiToAnthropicRequest({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }).max_tokens).toBe(DEFAULT_ANTHROPIC_MAX_TOKENS);
    expect(DEFAULT_ANTHROPIC_MAX_TOKENS).toBe(4096);
    const out = openaiToAnthropicRequest({ model: 'm', messages: [{ role: 'system', content: 'S' }, { role: 'user', content: 'hi' }], max_tokens: 10, max_completion_tokens: 20 });
    expect(out.max_tokens).toBe(20);
    expect(out.system).toBe('S');
    expect(out.messages).toEqual([{ role: 'user', content: 'hi' }]);
  });

  it('maps tools, tool choices, tool calls and tool results (merged into one user turn)', () => {
    const out = openaiToAnthropicRequest({
      model: 'm',
      tools: [{ type: 'function', function: { name: 'f', description: 'does f', parameters: { type: 'object', properties: { a: { type: 'string' } } } } }, { type: 'function', function: { name: 'g' } }],
      tool_choice: 'required',
      parallel_tool_calls: false,
      messages: [
        { role: 'user', content: 'go' },
        {
          role: 'assistant',
          content: 'Calling.',
          tool_calls: [
            { id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":"x"}' } },
            { id: 'c2', type: 'function', function: { name: 'g', arguments: '' } },
          ],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'A' },
        { role: 'tool', tool_call_id: 'c2', content: [{ type: 'text', text: 'B' }] },
        { role: 'user', content: 'and?' },
      ],
    });
    expect(out.tools).toEqual([
      { name: 'f', description: 'does f', input_schema: { type: 'object', properties: { a: { type: 'string' } } } },
      { name: 'g', input_schema: { type: 'object', properties: {} } },
    ]);
    expect(out.tool_choice).toEqual({ type: 'any', disable_parallel_tool_use: true });
    expect(out.messages).toEqual([
      { role: 'user', content: 'go' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Calling.' },
          { type: 'tool_use', id: 'c1', name: 'f', input: { a: 'x' } },
          { type: 'tool_use', id: 'c2', name: 'g', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'c1', content: 'A' },
          { type: 'tool_result', tool_use_id: 'c2', content: 'B' },
          { type: 'text', text: 'and?' },
        ],
      },
    ]);
    const named = openaiToAnthropicRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }], tools: [{ type: 'function', function: { name: 'f' } }], tool_choice: { type: 'function', function: { name: 'f' } } });
    expect(named.tool_choice).toEqual({ type: 'tool', name: 'f' });
    const none = openaiToAnthropicRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }], tools: [{ type: 'function', function: { name: 'f' } }], tool_choice: 'none' });
    expect(none.tool_choice).toEqual({ type: 'none' });
  });

  it('rejects with 400 what Anthropic cannot represent', () => {
    const bad = (req: Record<string, unknown>) => {
      try {
        openaiToAnthropicRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }], ...req } as never);
      } catch (err) {
        return err instanceof GatewayError ? err.status : -1;
      }
      return 0;
    };
    expect(bad({ n: 2 })).toBe(400);
    expect(bad({ messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'x', format: 'wav' } }] }] })).toBe(400);
    expect(bad({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:nonsense' } }] }] })).toBe(400);
    expect(bad({ messages: [{ role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{broken' } }] }] })).toBe(400);
    expect(bad({ functions: [{ name: 'f' }] })).toBe(400);
  });
});

describe('Anthropic request → OpenAI request', () => {
  it('turns system, images, documents, tool uses and tool results into OpenAI messages', () => {
    const out = anthropicToOpenAIRequest({
      model: 'm',
      max_tokens: 77,
      system: [
        { type: 'text', text: 'A.' },
        { type: 'text', text: 'B.' },
      ],
      temperature: 0.3,
      top_k: 5,
      stop_sequences: ['X'],
      metadata: { user_id: 'u' },
      tools: [{ name: 'f', description: 'd', input_schema: { type: 'object', properties: {} } }],
      tool_choice: { type: 'auto', disable_parallel_tool_use: true },
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'look' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } },
            { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBE' } },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'hmm', signature: 's' },
            { type: 'text', text: 'Using f.' },
            { type: 'tool_use', id: 't1', name: 'f', input: { q: 1 } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'r1' }, { type: 'text', text: 'r2' }] },
            { type: 'text', text: 'thanks' },
          ],
        },
      ],
    });
    expect(out).toEqual({
      model: 'm',
      max_completion_tokens: 77,
      temperature: 0.3,
      stop: ['X'],
      user: 'u',
      tools: [{ type: 'function', function: { name: 'f', description: 'd', parameters: { type: 'object', properties: {} } } }],
      tool_choice: 'auto',
      parallel_tool_calls: false,
      messages: [
        { role: 'system', content: 'A.\n\nB.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'look' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
            { type: 'file', file: { filename: 'document.pdf', file_data: 'data:application/pdf;base64,JVBE' } },
          ],
        },
        { role: 'assistant', content: 'Using f.', tool_calls: [{ id: 't1', type: 'function', function: { name: 'f', arguments: '{"q":1}' } }] },
        { role: 'tool', tool_call_id: 't1', content: 'r1\nr2' },
        { role: 'user', content: 'thanks' },
      ],
    });
  });

  it('maps tool choices and rejects server tools', () => {
    const base = { model: 'm', max_tokens: 5, messages: [{ role: 'user' as const, content: 'x' }], tools: [{ name: 'f', input_schema: {} }] };
    expect(anthropicToOpenAIRequest({ ...base, tool_choice: { type: 'any' } }).tool_choice).toBe('required');
    expect(anthropicToOpenAIRequest({ ...base, tool_choice: { type: 'none' } }).tool_choice).toBe('none');
    expect(anthropicToOpenAIRequest({ ...base, tool_choice: { type: 'tool', name: 'f' } }).tool_choice).toEqual({ type: 'function', function: { name: 'f' } });
    expect(() => anthropicToOpenAIRequest({ ...base, tools: [{ name: 'web_search', type: 'web_search_20250305' }] })).toThrow(GatewayError);
  });

  it('gets usage from the upstream by setting include_usage on every stream', () => {
    const body = JSON.parse(openaiChatRequest({ model: 'client-name', messages: [{ role: 'user', content: 'x' }], stream: true }, 'upstream-name', true));
    expect(body).toMatchObject({ model: 'upstream-name', stream: true, stream_options: { include_usage: true } });
    const plain = JSON.parse(openaiChatRequest({ model: 'a', messages: [], stream_options: { include_usage: true } }, 'b', false));
    expect(plain.stream_options).toBeUndefined();
  });
});

describe('responses', () => {
  it('OpenAI completion → Anthropic message', () => {
    const m = openaiToAnthropicResponse({
      id: 'chatcmpl-9',
      object: 'chat.completion',
      created: 1,
      model: 'gpt-x',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'Let me check.', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"city":"Rome"}' } }] },
          finish_reason: 'tool_calls',
          logprobs: null,
        },
      ],
      usage: { prompt_tokens: 30, completion_tokens: 12, total_tokens: 42, prompt_tokens_details: { cached_tokens: 10 } },
    });
    expect(m).toEqual({
      id: 'msg_chatcmpl-9',
      type: 'message',
      role: 'assistant',
      model: 'gpt-x',
      content: [
        { type: 'text', text: 'Let me check.' },
        { type: 'tool_use', id: 'call_1', name: 'f', input: { city: 'Rome' } },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 20, output_tokens: 12, cache_read_input_tokens: 10, cache_creation_input_tokens: 0 },
    });
    const reasons = (['stop', 'length', 'content_filter'] as const).map(
      (f) => openaiToAnthropicResponse({ id: 'x', object: 'chat.completion', created: 1, model: 'g', choices: [{ index: 0, message: { role: 'assistant', content: 'a' }, finish_reason: f, logprobs: null }] }).stop_reason,
    );
    expect(reasons).toEqual(['end_turn', 'max_tokens', 'refusal']);
  });

  it('Anthropic message → OpenAI completion', () => {
    const c = anthropicToOpenAIResponse(
      {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        model: 'claude-x',
        content: [
          { type: 'text', text: 'Checking ' },
          { type: 'text', text: 'now.' },
          { type: 'tool_use', id: 'toolu_1', name: 'f', input: { a: [1, 2] } },
        ],
        stop_reason: 'tool_use',
        stop_sequence: null,
        usage: { input_tokens: 5, output_tokens: 7, cache_read_input_tokens: 3, cache_creation_input_tokens: 2 },
      },
      1700000000,
    );
    expect(c).toEqual({
      id: 'msg_1',
      object: 'chat.completion',
      created: 1700000000,
      model: 'claude-x',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'Checking now.', refusal: null, tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'f', arguments: '{"a":[1,2]}' } }] },
          finish_reason: 'tool_calls',
          logprobs: null,
        },
      ],
      usage: { prompt_tokens: 10, completion_tokens: 7, total_tokens: 17, prompt_tokens_details: { cached_tokens: 3 }, completion_tokens_details: { reasoning_tokens: 0 } },
    });
    const only = anthropicToOpenAIResponse({ id: 'm', type: 'message', role: 'assistant', model: 'c', content: [{ type: 'tool_use', id: 't', name: 'f', input: {} }], stop_reason: 'tool_use', stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } }, 1);
    expect(only.choices[0].message.content).toBeNull();
    const stops = (['end_turn', 'stop_sequence', 'max_tokens', 'refusal', 'pause_turn'] as const).map(
      (r) => anthropicToOpenAIResponse({ id: 'm', type: 'message', role: 'assistant', model: 'c', content: [], stop_reason: r, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } }, 1).choices[0].finish_reason,
    );
    expect(stops).toEqual(['stop', 'stop', 'length', 'content_filter', 'stop']);
  });
});

describe('OpenAI chunks → Anthropic events', () => {
  it('builds message_start, blocks for text and each tool call, message_delta with usage, message_stop', () => {
    const t = new OpenAIToAnthropicStream('asked-model');
    const { frames } = run(t, [
      chunk({ role: 'assistant', content: '' }),
      chunk({ content: 'Hi' }),
      chunk({ content: ' there' }),
      chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'f', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"x":' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '1}' } }] }),
      chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'g', arguments: '{}' } }] }),
      chunk({}, 'tool_calls'),
      { data: JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-x', choices: [], usage: { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 } }) },
      { data: '[DONE]' },
    ]);
    expect(frames.map((f) => f.event)).toEqual([
      'message_start',
      'ping',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    const data = frames.map((f) => JSON.parse(f.data));
    for (const [i, f] of frames.entries()) expect(data[i].type).toBe(f.event);
    expect(data[0].message).toMatchObject({ id: 'msg_chatcmpl-1', type: 'message', role: 'assistant', model: 'gpt-x', content: [], stop_reason: null });
    expect(data[2]).toEqual({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
    expect(data[3].delta).toEqual({ type: 'text_delta', text: 'Hi' });
    expect(data[6]).toEqual({ type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'call_a', name: 'f', input: {} } });
    expect(data[7].delta).toEqual({ type: 'input_json_delta', partial_json: '{"x":' });
    expect(data[10].content_block).toMatchObject({ id: 'call_b', name: 'g' });
    expect(data[10].index).toBe(2);
    expect(data[13]).toEqual({ type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 4, input_tokens: 9 } });
    expect(t.complete).toBe(true);
    expect(t.usage).toEqual({ input: 9, output: 4 });
  });

  it('treats a stream that stopped after its finish reason as whole, and one cut before as cut', () => {
    const whole = new OpenAIToAnthropicStream('m');
    whole.push(chunk({ content: 'a' }));
    whole.push(chunk({}, 'length'));
    const tail = whole.end();
    expect(tail).toContain('"stop_reason":"max_tokens"');
    expect(tail).toContain('event: message_stop');
    const cut = new OpenAIToAnthropicStream('m');
    cut.push(chunk({ content: 'abcdefgh' }));
    expect(cut.end()).toBeNull();
    expect(cut.deliveredTokens).toBe(2);
  });

  it('turns an error chunk into an upstream failure', () => {
    const t = new OpenAIToAnthropicStream('m');
    expect(() => t.push({ data: '{"error":{"message":"boom","type":"server_error"}}' })).toThrow(UpstreamFailure);
  });
});

describe('Anthropic events → OpenAI chunks', () => {
  const events = [
    ev('message_start', { message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-x', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 11, output_tokens: 1 } } }),
    ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
    ev('ping'),
    ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Hello' } }),
    ev('content_block_stop', { index: 0 }),
    ev('content_block_start', { index: 1, content_block: { type: 'tool_use', id: 'toolu_1', name: 'f', input: {} } }),
    ev('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: '' } }),
    ev('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: '{"a":' } }),
    ev('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: '2}' } }),
    ev('content_block_stop', { index: 1 }),
    ev('message_delta', { delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 8 } }),
    ev('message_stop'),
  ];

  it('gives role, content, tool-call and finish chunks, then the usage chunk and [DONE]', () => {
    const t = new AnthropicToOpenAIStream('asked', true);
    const { frames } = run(t, events);
    expect(frames[frames.length - 1].data).toBe('[DONE]');
    const chunks = frames.slice(0, -1).map((f) => JSON.parse(f.data));
    for (const c of chunks) expect(c).toMatchObject({ id: 'msg_1', object: 'chat.completion.chunk', model: 'claude-x' });
    expect(chunks.map((c) => (c.choices.length ? c.choices[0].delta : null))).toEqual([
      { role: 'assistant', content: '' },
      { content: 'Hello' },
      { tool_calls: [{ index: 0, id: 'toolu_1', type: 'function', function: { name: 'f', arguments: '' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '{"a":' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '2}' } }] },
      {},
      null,
    ]);
    expect(chunks[5].choices[0].finish_reason).toBe('tool_calls');
    for (const c of chunks.slice(0, -1)) expect(c.usage).toBeNull();
    expect(chunks[6]).toMatchObject({ choices: [], usage: { prompt_tokens: 11, completion_tokens: 8, total_tokens: 19 } });
    expect(t.usage).toEqual({ input: 11, output: 8 });
  });

  it('leaves the usage chunk out when the client did not ask for it', () => {
    const { frames } = run(new AnthropicToOpenAIStream('asked', false), events);
    const chunks = frames.slice(0, -1).map((f) => JSON.parse(f.data));
    expect(chunks.every((c) => c.choices.length === 1 && !('usage' in c))).toBe(true);
  });

  it('turns an error event into an upstream failure with its status', () => {
    const t = new AnthropicToOpenAIStream('m', false);
    t.push(events[0]);
    try {
      t.push(ev('error', { error: { type: 'overloaded_error', message: 'Overloaded' } }));
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(UpstreamFailure);
      expect((err as UpstreamFailure).status).toBe(529);
      expect((err as UpstreamFailure).retryable).toBe(true);
    }
  });
});

describe('pass-through streams', () => {
  it('forwards OpenAI chunks byte for byte and drops the usage chunk the client did not ask for', () => {
    const t = new OpenAIPassthroughStream(false);
    const usageChunk = { data: '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}' };
    const text = chunk({ content: 'hi "usage":{' }, null, { usage: null });
    expect(t.push(text)).toBe(dataFrame(text.data));
    expect(t.push(usageChunk)).toBe('');
    expect(t.push({ data: '[DONE]' })).toBe('data: [DONE]\n\n');
    expect(t.usage).toEqual({ input: 3, output: 2, cachedInput: null });
    expect(new OpenAIPassthroughStream(true).push(usageChunk)).toBe(dataFrame(usageChunk.data));
  });

  it('forwards Anthropic events as they came and reads usage from message_start and message_delta', () => {
    const t = new AnthropicPassthroughStream();
    const start = ev('message_start', { message: { id: 'm', usage: { input_tokens: 4, cache_read_input_tokens: 6, output_tokens: 1 } } });
    expect(t.push(start)).toBe(eventFrame('message_start', start.data));
    t.push(ev('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 9 } }));
    // Cache reads are input too, and counted apart for their own rate.
    expect(t.usage).toEqual({ input: 10, output: 9, cachedInput: 6 });
    expect(t.end()).toContain('message_stop');
    expect(() => new AnthropicPassthroughStream().push(ev('error', { error: { type: 'api_error', message: 'x' } }))).toThrow(UpstreamFailure);
  });

  it('writes error frames each SDK understands', () => {
    const g = new GatewayError(502, 'upstream_error', 'The upstream provider failed.');
    expect(streamErrorFrame('openai', g)).toBe(`data: ${JSON.stringify({ error: { message: 'The upstream provider failed.', type: 'server_error', code: 'upstream_error', param: null } })}\n\n`);
    expect(streamErrorFrame('anthropic', g)).toBe(`event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: 'api_error', message: 'The upstream provider failed.' } })}\n\n`);
  });
});

describe('SSE reader', () => {
  it('reassembles events split across network chunks, multi-byte characters included', async () => {
    const text = 'event: a\ndata: {"t":"héllo ✓"}\n\ndata: [DONE]\n\n';
    const bytes = Buffer.from(text);
    const pieces = [bytes.subarray(0, 7), bytes.subarray(7, 26), bytes.subarray(26, 27), bytes.subarray(27)];
    const reader = new SseReader({ next: async () => pieces.shift() ?? null, cancel: () => undefined, discard: () => undefined });
    const got: { event?: string; data: string }[] = [];
    for (let evs = await reader.next(); evs; evs = await reader.next()) got.push(...evs.map((e) => ({ event: e.event, data: e.data })));
    expect(got).toEqual([
      { event: 'a', data: '{"t":"héllo ✓"}' },
      { event: undefined, data: '[DONE]' },
    ]);
  });
});

describe('Gemini function responses', () => {
  const resultOf = (response: unknown) => {
    const hub = CHAT_CODECS.gemini.decodeRequest({
      model: 'm',
      contents: [
        { role: 'user', parts: [{ text: 'Rainy Lisbon' }] },
        { role: 'model', parts: [{ functionCall: { name: 'weather', args: { city: 'Lisbon' } } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'weather', response } }] },
      ],
    });
    const part = hub.messages.flatMap((m) => m.parts).find((p) => p.type === 'tool_result');
    return part && part.type === 'tool_result' ? part.content : undefined;
  };

  it('reads a one-key text wrapper, and the AI SDK’s {name, content}, as the text; other objects as JSON', () => {
    expect(resultOf({ result: 'sunny' })).toBe('sunny');
    expect(resultOf({ output: 'sunny' })).toBe('sunny');
    expect(resultOf({ name: 'weather', content: 'sunny' })).toBe('sunny');
    expect(resultOf({ temp: 21, sky: 'clear' })).toBe('{"temp":21,"sky":"clear"}');
    expect(resultOf({ name: 'other', content: 'x' })).toBe('{"name":"other","content":"x"}');
  });

  it('sends a text result to Gemini as {result} and an object result as it is', () => {
    const hub = CHAT_CODECS.openai.decodeRequest({
      model: 'm',
      messages: [
        { role: 'user', content: 'Rainy Lisbon' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'weather', arguments: '{}' } }, { id: 'c2', type: 'function', function: { name: 'weather', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
        { role: 'tool', tool_call_id: 'c2', content: '{"temp":21}' },
      ],
    });
    const out = CHAT_CODECS.gemini.encodeRequest(hub, 'm') as any;
    const responses = out.contents.flatMap((c: any) => c.parts).filter((p: any) => p.functionResponse).map((p: any) => p.functionResponse.response);
    expect(responses).toEqual([{ result: 'sunny' }, { temp: 21 }]);
  });
});
