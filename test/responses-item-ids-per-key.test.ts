import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatRig, post, type ChatRig } from './helpers/chat.js';
import { errorShapeProblem } from './helpers/error-shapes.js';

// Item ids belong to the key that stored them: another key storing the same id first neither hides
// nor replaces this key's item, and an item sent again under an id this key already stored is
// kept (the newest copy is what an item_reference finds), never dropped.

const MODEL = 'gpt-sim';

function userItem(id: string, text: string) {
  return { type: 'message', id, role: 'user', content: [{ type: 'input_text', text }] };
}

async function said(rig: ChatRig, key: string, input: unknown[]): Promise<{ status: number; text: string; body: any }> {
  const res = await post(rig, '/v1/responses', { model: MODEL, input }, key);
  const body = (await res.json()) as any;
  const text = res.status === 200 ? String(body.output?.find((i: any) => i.type === 'message')?.content?.[0]?.text ?? '') : '';
  return { status: res.status, text, body };
}

describe('Responses item ids are scoped by key', () => {
  let rig: ChatRig;
  let other: string;
  beforeAll(async () => {
    rig = await startChatRig();
    other = (await rig.gw.createKey()).key;
  });
  afterAll(async () => rig.close());

  it("stores a key's item even when another key stored the same id first", async () => {
    const theirs = await said(rig, other, [userItem('msg_shared', 'banana from the other key')]);
    expect(theirs.status).toBe(200);
    const mine = await said(rig, rig.key, [userItem('msg_shared', 'apple from this key')]);
    expect(mine.status).toBe(200);

    const back = await said(rig, rig.key, [{ type: 'item_reference', id: 'msg_shared' }]);
    expect(back.status).toBe(200);
    expect(back.text).toBe('You said: apple from this key');
    const theirsBack = await said(rig, other, [{ type: 'item_reference', id: 'msg_shared' }]);
    expect(theirsBack.text).toBe('You said: banana from the other key');
  });

  it('keeps the newest copy of an item id a key sends again', async () => {
    expect((await said(rig, rig.key, [userItem('msg_again', 'first version')])).status).toBe(200);
    expect((await said(rig, rig.key, [userItem('msg_again', 'second version')])).status).toBe(200);
    const back = await said(rig, rig.key, [{ type: 'item_reference', id: 'msg_again' }]);
    expect(back.text).toBe('You said: second version');
  });

  it('refuses one request that gives two input items the same id (400, nothing stored)', async () => {
    const twice = await said(rig, rig.key, [userItem('msg_twice', 'one'), userItem('msg_twice', 'two')]);
    expect(twice.status).toBe(400);
    expect(errorShapeProblem('openai', twice.body)).toBeNull();
    expect(twice.body.error.message).toContain('msg_twice');
    expect((await said(rig, rig.key, [{ type: 'item_reference', id: 'msg_twice' }])).status).toBe(404);
  });
});
