import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import type { ChatRig } from './helpers/chat.js';
import { eventually } from './helpers/chat.js';
import { MODEL_OF, WIRE_FORMATS, startFormatsRig } from './helpers/chat-formats.js';

// The Responses API's server-side state, kept by the gateway whatever the upstream speaks: a
// stored response carries its conversation into the next turn by previous_response_id or by item
// references, can be read, listed and deleted, and is invisible to every other key.

describe.each(WIRE_FORMATS)('Responses state with a %s upstream', (upstream) => {
  const model = MODEL_OF[upstream];
  let rig: ChatRig;
  let client: OpenAI;
  let other: OpenAI;
  beforeAll(async () => {
    rig = await startFormatsRig();
    client = new OpenAI({ apiKey: rig.key, baseURL: `${rig.gw.url}/v1`, maxRetries: 0 });
    other = new OpenAI({ apiKey: (await rig.gw.createKey()).key, baseURL: `${rig.gw.url}/v1`, maxRetries: 0 });
  });
  afterAll(async () => rig.close());

  // Simulator tokens: "My name is Ada" = 4 in, "You said: My name is Ada" = 7 out, "What next" = 2.
  const WITH_HISTORY = 4 + 7 + 2;

  it('carries the stored conversation into a turn named by previous_response_id', async () => {
    const first = await client.responses.create({ model, input: 'My name is Ada' });
    expect(first.output_text).toBe('You said: My name is Ada');
    const alone = await client.responses.create({ model, input: 'What next', store: false });
    expect(alone.usage!.input_tokens).toBe(2);
    const second = await client.responses.create({ model, input: 'What next', previous_response_id: first.id });
    expect(second.previous_response_id).toBe(first.id);
    expect(second.usage!.input_tokens).toBe(WITH_HISTORY);
    // A chain: the third turn sees both earlier ones.
    const third = await client.responses.create({ model, input: 'What next', previous_response_id: second.id });
    expect(third.usage!.input_tokens).toBe(WITH_HISTORY + 5 + 2);
  });

  it('resolves item references to stored output items (the AI SDK multi-turn pattern)', async () => {
    const first = await client.responses.create({ model, input: 'My name is Ada' });
    const message = first.output.find((i) => i.type === 'message')!;
    const second = await client.responses.create({
      model,
      input: [{ role: 'user', content: 'My name is Ada' }, { type: 'item_reference', id: message.id }, { role: 'user', content: 'What next' }],
    });
    expect(second.usage!.input_tokens).toBe(WITH_HISTORY);
    await expect(client.responses.create({ model, input: [{ type: 'item_reference', id: 'msg_unknown' }] })).rejects.toMatchObject({ status: 404 });
  });

  it('sends a tool result back by previous_response_id after a forced call', async () => {
    const tools = [{ type: 'function' as const, name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] }, strict: false }];
    const first = await client.responses.create({ model, input: 'Find Lisbon', tools, tool_choice: 'required' });
    const call = first.output.find((i) => i.type === 'function_call') as OpenAI.Responses.ResponseFunctionToolCall;
    expect(call).toMatchObject({ name: 'lookup', arguments: JSON.stringify({ q: 'Find Lisbon' }) });
    const second = await client.responses.create({ model, previous_response_id: first.id, tools, input: [{ type: 'function_call_output', call_id: call.call_id, output: 'sunny' }] });
    expect(second.output_text).toContain('Tool result:');
    expect(second.output_text).toContain('sunny');
  });

  it('stores a streamed response too, and reads, lists and deletes it', async () => {
    const stream = await client.responses.create({ model, input: 'Hello there', stream: true });
    let id = '';
    for await (const e of stream) if (e.type === 'response.completed') id = e.response.id;
    const got = await client.responses.retrieve(id);
    expect(got).toMatchObject({ id, object: 'response', status: 'completed', output_text: 'You said: Hello there' });
    const items = await client.responses.inputItems.list(id);
    expect(items.data).toHaveLength(1);
    expect(items.data[0]).toMatchObject({ type: 'message', role: 'user' });
    expect(items.data[0].id).toMatch(/^msg_/);
    const deleted = await client.responses.delete(id);
    expect(deleted).toMatchObject({ id, object: 'response.deleted', deleted: true });
    await expect(client.responses.retrieve(id)).rejects.toMatchObject({ status: 404 });
  });

  it('keeps nothing for store: false and shows nothing to another key', async () => {
    const unstored = await client.responses.create({ model, input: 'Hello there', store: false });
    expect((unstored as unknown as { store: boolean }).store).toBe(false);
    await expect(client.responses.retrieve(unstored.id)).rejects.toMatchObject({ status: 404 });
    const mine = await client.responses.create({ model, input: 'Hello there' });
    await expect(other.responses.retrieve(mine.id)).rejects.toMatchObject({ status: 404 });
    await expect(other.responses.create({ model, input: 'x', previous_response_id: mine.id })).rejects.toMatchObject({ status: 404 });
    await expect(other.responses.delete(mine.id)).rejects.toMatchObject({ status: 404 });
    expect((await client.responses.retrieve(mine.id)).id).toBe(mine.id);
  });
});

describe('Responses retention', () => {
  let rig: ChatRig;
  beforeAll(async () => {
    rig = await startFormatsRig();
    // A retention of about a second: what expires is gone for reads and for previous_response_id.
    rig.gw.services.config.responses.retain_days = 1.5 / 86_400;
  });
  afterAll(async () => rig.close());

  it('forgets a response after responses.retain_days', async () => {
    const client = new OpenAI({ apiKey: rig.key, baseURL: `${rig.gw.url}/v1`, maxRetries: 0 });
    const r = await client.responses.create({ model: 'gpt-sim', input: 'Hello there' });
    expect((await client.responses.retrieve(r.id)).id).toBe(r.id);
    await eventually(async () => (await client.responses.retrieve(r.id).then(() => 200, (e: { status: number }) => e.status)) === 404, 10_000, 'the response to expire');
    await expect(client.responses.create({ model: 'gpt-sim', input: 'x', previous_response_id: r.id })).rejects.toMatchObject({ status: 404 });
    expect(await rig.gw.services.responses.sweep()).toBeGreaterThanOrEqual(1);
  });
});
