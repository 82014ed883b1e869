import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI, type Schema } from '@google/genai';
import { CHAT_TEST_MODELS, startChatRig, type ChatRig } from './chat.js';

// One rig whose chat models sit behind channels of each upstream wire format, all answered by one
// simulator, and one driver per client format built on that format's official SDK. The contract
// suite crosses them: every client format against every upstream format.

export type WireFormat = 'openai' | 'anthropic' | 'responses' | 'gemini';
export const WIRE_FORMATS: WireFormat[] = ['openai', 'anthropic', 'responses', 'gemini'];

/** The model whose only channel speaks each upstream format. */
export const MODEL_OF: Record<WireFormat, string> = { openai: 'gpt-sim', anthropic: 'claude-sim', responses: 'resp-sim', gemini: 'gemini-sim' };

export const FORMAT_MODELS = {
  ...CHAT_TEST_MODELS,
  'resp-sim': { kind: 'chat', owned_by: 'openai', price: { input_per_million: 2, output_per_million: 8 } },
  'gemini-sim': { kind: 'chat', owned_by: 'google', price: { input_per_million: 0.3, output_per_million: 2.5 } },
} as const;

export function startFormatsRig(opts: { creditMicros?: number | null } = {}): Promise<ChatRig> {
  return startChatRig({
    ...opts,
    models: FORMAT_MODELS,
    channels: (sim) => [
      { name: 'oai', type: 'openai', base_url: `${sim}/v1`, api_key: 'sk-test-openai-upstream', models: ['gpt-sim'] },
      { name: 'oai-resp', type: 'openai', upstream_format: 'responses', base_url: `${sim}/v1`, api_key: 'sk-test-openai-upstream', models: ['resp-sim'] },
      { name: 'anth', type: 'anthropic', base_url: sim, api_key: 'sk-ant-test-upstream', models: ['claude-sim'] },
      { name: 'gem', type: 'gemini', base_url: sim, api_key: 'gemini-test-upstream', models: ['gemini-sim'] },
      { name: 'simch', type: 'simulator', base_url: sim, api_key: 'sim-key', models: ['sim-chat', 'sim-image'] },
    ],
  });
}

export interface Usage {
  input: number;
  output: number;
}

export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** What every client format can do, through its own SDK, reduced to comparable results. */
export interface FormatDriver {
  text(model: string, prompt: string): Promise<{ text: string; usage: Usage }>;
  stream(model: string, prompt: string): Promise<{ text: string; usage: Usage; events: number }>;
  /** A forced call of `tool`; the call's name and parsed arguments. */
  tool(model: string, prompt: string, tool: ToolSpec, stream: boolean): Promise<{ name: string; args: Record<string, unknown>; id: string }>;
  /** The answer under a JSON schema, parsed. */
  json(model: string, prompt: string, schema: Record<string, unknown>, stream: boolean): Promise<unknown>;
}

export function driverFor(format: WireFormat, rig: ChatRig): FormatDriver {
  switch (format) {
    case 'openai':
      return openaiChatDriver(new OpenAI({ apiKey: rig.key, baseURL: `${rig.gw.url}/v1`, maxRetries: 0 }));
    case 'responses':
      return responsesDriver(new OpenAI({ apiKey: rig.key, baseURL: `${rig.gw.url}/v1`, maxRetries: 0 }));
    case 'anthropic':
      return anthropicDriver(new Anthropic({ apiKey: rig.key, baseURL: rig.gw.url, maxRetries: 0 }));
    case 'gemini':
      return geminiDriver(new GoogleGenAI({ apiKey: rig.key, httpOptions: { baseUrl: rig.gw.url } }));
  }
}

function openaiChatDriver(client: OpenAI): FormatDriver {
  return {
    async text(model, prompt) {
      const c = await client.chat.completions.create({ model, messages: [{ role: 'user', content: prompt }] });
      return { text: c.choices[0].message.content ?? '', usage: { input: c.usage!.prompt_tokens, output: c.usage!.completion_tokens } };
    },
    async stream(model, prompt) {
      const s = await client.chat.completions.create({ model, messages: [{ role: 'user', content: prompt }], stream: true, stream_options: { include_usage: true } });
      let text = '';
      let usage: Usage = { input: -1, output: -1 };
      let events = 0;
      for await (const c of s) {
        events++;
        text += c.choices[0]?.delta?.content ?? '';
        if (c.usage) usage = { input: c.usage.prompt_tokens, output: c.usage.completion_tokens };
      }
      return { text, usage, events };
    },
    async tool(model, prompt, tool, stream) {
      const tools = [{ type: 'function' as const, function: tool }];
      if (!stream) {
        const c = await client.chat.completions.create({ model, messages: [{ role: 'user', content: prompt }], tools, tool_choice: 'required' });
        const call = c.choices[0].message.tool_calls![0] as OpenAI.Chat.ChatCompletionMessageFunctionToolCall;
        return { name: call.function.name, args: JSON.parse(call.function.arguments), id: call.id };
      }
      const s = await client.chat.completions.create({ model, messages: [{ role: 'user', content: prompt }], tools, tool_choice: 'required', stream: true });
      let name = '';
      let args = '';
      let id = '';
      for await (const c of s) {
        for (const tc of c.choices[0]?.delta?.tool_calls ?? []) {
          name += tc.function?.name ?? '';
          args += tc.function?.arguments ?? '';
          id += tc.id ?? '';
        }
      }
      return { name, args: JSON.parse(args), id };
    },
    async json(model, prompt, schema, stream) {
      const response_format = { type: 'json_schema' as const, json_schema: { name: 'answer', schema, strict: true } };
      if (!stream) {
        const c = await client.chat.completions.create({ model, messages: [{ role: 'user', content: prompt }], response_format });
        return JSON.parse(c.choices[0].message.content ?? '');
      }
      const s = await client.chat.completions.create({ model, messages: [{ role: 'user', content: prompt }], response_format, stream: true });
      let text = '';
      for await (const c of s) text += c.choices[0]?.delta?.content ?? '';
      return JSON.parse(text);
    },
  };
}

function responsesDriver(client: OpenAI): FormatDriver {
  return {
    async text(model, prompt) {
      const r = await client.responses.create({ model, input: prompt });
      return { text: r.output_text, usage: { input: r.usage!.input_tokens, output: r.usage!.output_tokens } };
    },
    async stream(model, prompt) {
      const s = await client.responses.create({ model, input: prompt, stream: true });
      let text = '';
      let usage: Usage = { input: -1, output: -1 };
      let events = 0;
      for await (const e of s) {
        events++;
        if (e.type === 'response.output_text.delta') text += e.delta;
        if (e.type === 'response.completed') usage = { input: e.response.usage!.input_tokens, output: e.response.usage!.output_tokens };
      }
      return { text, usage, events };
    },
    async tool(model, prompt, tool, stream) {
      const tools = [{ type: 'function' as const, name: tool.name, description: tool.description, parameters: tool.parameters, strict: false }];
      if (!stream) {
        const r = await client.responses.create({ model, input: prompt, tools, tool_choice: 'required' });
        const call = r.output.find((i) => i.type === 'function_call') as OpenAI.Responses.ResponseFunctionToolCall;
        return { name: call.name, args: JSON.parse(call.arguments), id: call.call_id };
      }
      const s = await client.responses.create({ model, input: prompt, tools, tool_choice: 'required', stream: true });
      let done: OpenAI.Responses.ResponseFunctionToolCall | null = null;
      for await (const e of s) if (e.type === 'response.output_item.done' && e.item.type === 'function_call') done = e.item;
      return { name: done!.name, args: JSON.parse(done!.arguments), id: done!.call_id };
    },
    async json(model, prompt, schema, stream) {
      const text = { format: { type: 'json_schema' as const, name: 'answer', schema, strict: true } };
      if (!stream) return JSON.parse((await client.responses.create({ model, input: prompt, text })).output_text);
      const s = await client.responses.create({ model, input: prompt, text, stream: true });
      let out = '';
      for await (const e of s) if (e.type === 'response.output_text.delta') out += e.delta;
      return JSON.parse(out);
    },
  };
}

function anthropicDriver(client: Anthropic): FormatDriver {
  return {
    async text(model, prompt) {
      const m = await client.messages.create({ model, max_tokens: 200, messages: [{ role: 'user', content: prompt }] });
      const text = m.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
      return { text, usage: { input: m.usage.input_tokens + (m.usage.cache_read_input_tokens ?? 0), output: m.usage.output_tokens } };
    },
    async stream(model, prompt) {
      const s = client.messages.stream({ model, max_tokens: 200, messages: [{ role: 'user', content: prompt }] });
      let events = 0;
      s.on('streamEvent', () => events++);
      const m = await s.finalMessage();
      const text = m.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
      return { text, usage: { input: m.usage.input_tokens + (m.usage.cache_read_input_tokens ?? 0), output: m.usage.output_tokens }, events };
    },
    async tool(model, prompt, tool, stream) {
      const params = { model, max_tokens: 200, messages: [{ role: 'user' as const, content: prompt }], tools: [{ name: tool.name, description: tool.description, input_schema: tool.parameters as Anthropic.Tool['input_schema'] }], tool_choice: { type: 'any' as const } };
      const m = stream ? await client.messages.stream(params).finalMessage() : await client.messages.create(params);
      const use = m.content.find((b) => b.type === 'tool_use') as Anthropic.ToolUseBlock;
      return { name: use.name, args: use.input as Record<string, unknown>, id: use.id };
    },
    async json(model, prompt, schema, stream) {
      const params = { model, max_tokens: 400, messages: [{ role: 'user' as const, content: prompt }], output_config: { format: { type: 'json_schema' as const, schema } } };
      const m = stream ? await client.messages.stream(params).finalMessage() : await client.messages.create(params);
      return JSON.parse(m.content.map((b) => (b.type === 'text' ? b.text : '')).join(''));
    },
  };
}

function geminiDriver(ai: GoogleGenAI): FormatDriver {
  return {
    async text(model, prompt) {
      const r = await ai.models.generateContent({ model, contents: prompt });
      return { text: r.text ?? '', usage: { input: r.usageMetadata!.promptTokenCount!, output: (r.usageMetadata!.candidatesTokenCount ?? 0) + (r.usageMetadata!.thoughtsTokenCount ?? 0) } };
    },
    async stream(model, prompt) {
      const s = await ai.models.generateContentStream({ model, contents: prompt });
      let text = '';
      let usage: Usage = { input: -1, output: -1 };
      let events = 0;
      for await (const c of s) {
        events++;
        text += c.text ?? '';
        if (c.usageMetadata?.candidatesTokenCount != null) usage = { input: c.usageMetadata.promptTokenCount!, output: c.usageMetadata.candidatesTokenCount + (c.usageMetadata.thoughtsTokenCount ?? 0) };
      }
      return { text, usage, events };
    },
    async tool(model, prompt, tool, stream) {
      const config = {
        tools: [{ functionDeclarations: [{ name: tool.name, description: tool.description, parametersJsonSchema: tool.parameters }] }],
        toolConfig: { functionCallingConfig: { mode: 'ANY' as never } },
      };
      if (!stream) {
        const r = await ai.models.generateContent({ model, contents: prompt, config });
        const fc = r.functionCalls![0];
        return { name: fc.name!, args: fc.args as Record<string, unknown>, id: fc.id ?? '' };
      }
      const s = await ai.models.generateContentStream({ model, contents: prompt, config });
      let found: { name: string; args: Record<string, unknown>; id: string } | null = null;
      for await (const c of s) for (const fc of c.functionCalls ?? []) found = { name: fc.name!, args: fc.args as Record<string, unknown>, id: fc.id ?? '' };
      return found!;
    },
    async json(model, prompt, schema, stream) {
      const config = { responseMimeType: 'application/json', responseJsonSchema: schema as Schema };
      if (!stream) return JSON.parse((await ai.models.generateContent({ model, contents: prompt, config })).text ?? '');
      const s = await ai.models.generateContentStream({ model, contents: prompt, config });
      let out = '';
      for await (const c of s) out += c.text ?? '';
      return JSON.parse(out);
    },
  };
}
