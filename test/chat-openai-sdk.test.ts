import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { startChatRig, type ChatRig } from './helpers/chat.js';

// The official openai package against the gateway, for a model behind each kind of channel:
// gpt-sim (an `openai` channel: no conversion), claude-sim (an `anthropic` channel: converted both
// ways) and sim-chat (a `simulator` channel: the simulator's OpenAI side).

const WEATHER_TOOL: OpenAI.Chat.ChatCompletionTool = {
  type: 'function',
  function: { name: 'get_weather', description: 'Weather of a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};

describe.each(['gpt-sim', 'claude-sim', 'sim-chat'])('OpenAI SDK → %s', (model) => {
  let rig: ChatRig;
  let client: OpenAI;
  beforeAll(async () => {
    rig = await startChatRig();
    client = new OpenAI({ apiKey: rig.key, baseURL: `${rig.gw.url}/v1`, maxRetries: 0 });
  });
  afterAll(async () => rig.close());

  it('answers a non-streamed completion with content, finish reason and usage', async () => {
    const c = await client.chat.completions.create({
      model,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hello there' },
      ],
    });
    expect(c.object).toBe('chat.completion');
    expect(c.choices).toHaveLength(1);
    expect(c.choices[0].message.role).toBe('assistant');
    expect(c.choices[0].message.content).toBe('You said: Hello there');
    expect(c.choices[0].finish_reason).toBe('stop');
    // Simulator tokens: "Be brief." = 3, "Hello there" = 2; the answer is 5.
    expect(c.usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 5, total_tokens: 10 });
  });

  it('streams chunks and ends with the usage chunk when include_usage is asked for', async () => {
    const stream = await client.chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'Stream this please' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    const finishes: string[] = [];
    let usage: OpenAI.CompletionUsage | null | undefined;
    let chunks = 0;
    for await (const chunk of stream) {
      chunks++;
      expect(chunk.object).toBe('chat.completion.chunk');
      if (chunk.usage) {
        expect(chunk.choices).toEqual([]);
        usage = chunk.usage;
      }
      for (const ch of chunk.choices) {
        text += ch.delta.content ?? '';
        if (ch.finish_reason) finishes.push(ch.finish_reason);
      }
    }
    expect(chunks).toBeGreaterThan(2);
    expect(text).toBe('You said: Stream this please');
    expect(finishes).toEqual(['stop']);
    expect(usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 6, total_tokens: 9 });
  });

  it('does not send a usage chunk to a client that did not ask for one', async () => {
    const stream = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'No usage' }], stream: true });
    let text = '';
    for await (const chunk of stream) {
      expect(chunk.choices.length).toBe(1);
      text += chunk.choices[0].delta.content ?? '';
    }
    expect(text).toBe('You said: No usage');
  });

  it('returns a tool call with arguments derived from the prompt', async () => {
    const c = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Paris' }], tools: [WEATHER_TOOL] });
    const choice = c.choices[0];
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.tool_calls).toHaveLength(1);
    const call = choice.message.tool_calls![0] as OpenAI.Chat.ChatCompletionMessageFunctionToolCall;
    expect(call.type).toBe('function');
    expect(call.id).toMatch(/\S/);
    expect(call.function.name).toBe('get_weather');
    expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Paris' });
    expect(c.usage!.completion_tokens).toBeGreaterThan(0);
  });

  it('streams a tool call as id and name first, then argument pieces', async () => {
    const stream = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Rainy Lisbon' }], tools: [WEATHER_TOOL], tool_choice: 'required', stream: true });
    const calls: { id?: string; name?: string; args: string }[] = [];
    let finish: string | null = null;
    for await (const chunk of stream) {
      for (const d of chunk.choices[0]?.delta.tool_calls ?? []) {
        calls[d.index] ??= { args: '' };
        if (d.id) calls[d.index].id = d.id;
        if (d.function?.name) calls[d.index].name = d.function.name;
        calls[d.index].args += d.function?.arguments ?? '';
      }
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(calls).toHaveLength(1);
    expect(calls[0].name).toBe('get_weather');
    expect(calls[0].id).toMatch(/\S/);
    expect(JSON.parse(calls[0].args)).toEqual({ city: 'Rainy Lisbon' });
    expect(finish).toBe('tool_calls');
  });

  it('carries a tool result back and answers from it', async () => {
    const first = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Oslo' }], tools: [WEATHER_TOOL] });
    const call = first.choices[0].message.tool_calls![0] as OpenAI.Chat.ChatCompletionMessageFunctionToolCall;
    const second = await client.chat.completions.create({
      model,
      tools: [WEATHER_TOOL],
      messages: [
        { role: 'user', content: 'Oslo' },
        { role: 'assistant', content: null, tool_calls: [call] },
        { role: 'tool', tool_call_id: call.id, content: 'sunny, 21 C' },
      ],
    });
    expect(second.choices[0].finish_reason).toBe('stop');
    expect(second.choices[0].message.content).toBe('Tool result: sunny, 21 C');
  });

  it('reports length when max_tokens cuts the answer and honours stop sequences', async () => {
    const cut = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'one two three four five' }], max_tokens: 3 });
    expect(cut.choices[0].finish_reason).toBe('length');
    expect(cut.choices[0].message.content).toBe('You said:');
    expect(cut.usage!.completion_tokens).toBe(3);
    const stopped = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'alpha beta gamma' }], stop: [' gamma'] });
    expect(stopped.choices[0].finish_reason).toBe('stop');
    expect(stopped.choices[0].message.content).toBe('You said: alpha beta');
  });

  it('passes images (URL and base64) through to the model', async () => {
    const c = await client.chat.completions.create({
      model,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Describe' },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          ],
        },
      ],
    });
    expect(c.choices[0].message.content).toBe('You said: Describe');
    // Each image counts 85 tokens in the simulator: both reached it.
    expect(c.usage!.prompt_tokens).toBe(1 + 2 * 85);
  });
});
