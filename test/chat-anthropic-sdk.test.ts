import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Anthropic from '@anthropic-ai/sdk';
import { startChatRig, type ChatRig } from './helpers/chat.js';

// The official @anthropic-ai/sdk against the gateway, for a model behind each kind of channel:
// claude-sim (an `anthropic` channel: no conversion), gpt-sim (an `openai` channel: converted both
// ways) and sim-chat (a `simulator` channel: the simulator's Anthropic side).

const WEATHER_TOOL: Anthropic.Tool = {
  name: 'get_weather',
  description: 'Weather of a city',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

describe.each(['claude-sim', 'gpt-sim', 'sim-chat'])('Anthropic SDK → %s', (model) => {
  let rig: ChatRig;
  let client: Anthropic;
  beforeAll(async () => {
    rig = await startChatRig();
    client = new Anthropic({ apiKey: rig.key, baseURL: rig.gw.url, maxRetries: 0 });
  });
  afterAll(async () => rig.close());

  it('answers a message with content, stop reason and usage', async () => {
    const m = await client.messages.create({ model, max_tokens: 100, system: 'Be brief.', messages: [{ role: 'user', content: 'Hello there' }] });
    expect(m.type).toBe('message');
    expect(m.role).toBe('assistant');
    expect(m.id).toMatch(/^msg_/);
    expect(m.content).toEqual([{ type: 'text', text: 'You said: Hello there' }]);
    expect(m.stop_reason).toBe('end_turn');
    expect(m.usage.input_tokens).toBe(5);
    expect(m.usage.output_tokens).toBe(5);
  });

  it('streams the documented event sequence and the SDK assembles the message', async () => {
    const raw = await client.messages.create({ model, max_tokens: 100, messages: [{ role: 'user', content: 'Stream this please' }], stream: true });
    const types: string[] = [];
    let text = '';
    let stop: string | null = null;
    let output = -1;
    let input = -1;
    for await (const ev of raw) {
      types.push(ev.type);
      if (ev.type === 'message_start') input = ev.message.usage.input_tokens;
      if (ev.type === 'content_block_delta' && ev.delta.type === 'text_delta') text += ev.delta.text;
      if (ev.type === 'message_delta') {
        stop = ev.delta.stop_reason;
        output = ev.usage.output_tokens;
        if (ev.usage.input_tokens != null) input = ev.usage.input_tokens;
      }
    }
    expect(types[0]).toBe('message_start');
    expect(types.slice(-2)).toEqual(['message_delta', 'message_stop']);
    expect(types).toContain('content_block_start');
    expect(types).toContain('content_block_stop');
    expect(text).toBe('You said: Stream this please');
    expect(stop).toBe('end_turn');
    expect(output).toBe(6);
    expect(input).toBe(3);

    const final = await client.messages.stream({ model, max_tokens: 100, messages: [{ role: 'user', content: 'Again' }] }).finalMessage();
    expect(final.content).toEqual([{ type: 'text', text: 'You said: Again' }]);
    expect(final.stop_reason).toBe('end_turn');
    expect(final.usage).toMatchObject({ input_tokens: 1, output_tokens: 4 });
  });

  it('returns a tool_use block with input derived from the prompt', async () => {
    const m = await client.messages.create({ model, max_tokens: 200, messages: [{ role: 'user', content: 'Paris' }], tools: [WEATHER_TOOL] });
    expect(m.stop_reason).toBe('tool_use');
    const use = m.content.find((b) => b.type === 'tool_use') as Anthropic.ToolUseBlock;
    expect(use.name).toBe('get_weather');
    expect(use.id).toMatch(/\S/);
    expect(use.input).toEqual({ city: 'Paris' });
    expect(m.usage.output_tokens).toBeGreaterThan(0);
  });

  it('streams a tool_use block with input_json_delta pieces', async () => {
    const stream = client.messages.stream({ model, max_tokens: 200, messages: [{ role: 'user', content: 'Rainy Lisbon' }], tools: [WEATHER_TOOL], tool_choice: { type: 'any' } });
    let json = '';
    stream.on('inputJson', (partial) => {
      json += partial;
    });
    const final = await stream.finalMessage();
    expect(final.stop_reason).toBe('tool_use');
    const use = final.content.find((b) => b.type === 'tool_use') as Anthropic.ToolUseBlock;
    expect(use.name).toBe('get_weather');
    expect(use.input).toEqual({ city: 'Rainy Lisbon' });
    expect(JSON.parse(json)).toEqual({ city: 'Rainy Lisbon' });
  });

  it('carries a tool_result back and answers from it', async () => {
    const first = await client.messages.create({ model, max_tokens: 200, messages: [{ role: 'user', content: 'Oslo' }], tools: [WEATHER_TOOL] });
    const use = first.content.find((b) => b.type === 'tool_use') as Anthropic.ToolUseBlock;
    const second = await client.messages.create({
      model,
      max_tokens: 200,
      tools: [WEATHER_TOOL],
      messages: [
        { role: 'user', content: 'Oslo' },
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'sunny, 21 C' }] },
      ],
    });
    expect(second.stop_reason).toBe('end_turn');
    expect(second.content).toEqual([{ type: 'text', text: 'Tool result: sunny, 21 C' }]);
  });

  it('reports max_tokens and stop sequences', async () => {
    const cut = await client.messages.create({ model, max_tokens: 3, messages: [{ role: 'user', content: 'one two three four five' }] });
    expect(cut.stop_reason).toBe('max_tokens');
    expect(cut.content).toEqual([{ type: 'text', text: 'You said:' }]);
    expect(cut.usage.output_tokens).toBe(3);
    const stopped = await client.messages.create({ model, max_tokens: 100, messages: [{ role: 'user', content: 'alpha beta gamma' }], stop_sequences: [' gamma'] });
    expect(stopped.content).toEqual([{ type: 'text', text: 'You said: alpha beta' }]);
    // OpenAI does not say which stop sequence matched: through an OpenAI channel it is end_turn.
    expect(stopped.stop_reason).toBe(model === 'gpt-sim' ? 'end_turn' : 'stop_sequence');
  });

  it('passes images (base64 and URL) through to the model', async () => {
    const m = await client.messages.create({
      model,
      max_tokens: 100,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
            { type: 'image', source: { type: 'url', url: 'https://example.com/cat.png' } },
            { type: 'text', text: 'Describe' },
          ],
        },
      ],
    });
    expect(m.content).toEqual([{ type: 'text', text: 'You said: Describe' }]);
    expect(m.usage.input_tokens).toBe(1 + 2 * 85);
  });
});
