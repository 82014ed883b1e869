import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'node:http';
import { eventually, noOpenUpstream, startChatRig, type ChatRig } from './helpers/chat.js';

// A client that stops reading a stream: the gateway stops reading the upstream, so the upstream's
// own writes block (the simulator waits for 'drain') instead of the answer piling up in the
// gateway's memory. When the client reads again, the whole answer arrives, ending as it should.

// About 30 MB of chunks: more than the socket buffers between the three processes can hold.
const WORDS = 120_000;

describe('stream back-pressure', () => {
  let rig: ChatRig;
  beforeAll(async () => {
    rig = await startChatRig();
  });
  afterAll(async () => rig.close());

  const waiting = async () => ((await (await fetch(`${rig.sim.url}/__sim/chat`)).json()) as { streams_waiting_for_drain: number }).streams_waiting_for_drain;

  it('holds the upstream back while the client is not reading, then delivers everything', async () => {
    const prompt = Array.from({ length: WORDS }, (_, i) => `w${i}`).join(' ');
    // The whole echo (about 120 000 tokens) is within max_tokens: without it the simulator stops at 4096.
    const body = JSON.stringify({ model: 'gpt-sim', stream: true, max_tokens: 130_000, messages: [{ role: 'user', content: prompt }] });
    const url = new URL(`${rig.gw.url}/v1/chat/completions`);
    const res = await new Promise<import('node:http').IncomingMessage>((resolve, reject) => {
      const req = request(url, { method: 'POST', headers: { authorization: `Bearer ${rig.key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, resolve);
      req.on('error', reject);
      req.end(body);
    });
    expect(res.statusCode).toBe(200);
    res.pause();
    // Nobody reads: the pressure travels back to the simulator, which then waits to write.
    await eventually(async () => (await waiting()) === 1, 20_000, 'the upstream to be held back');
    // And it stays held back: a gateway that buffered instead would have drained the simulator's
    // ~30 MB (well under a second of work) long before these three seconds are over.
    for (let i = 0; i < 60; i++) {
      expect(await waiting()).toBe(1);
      expect((await rig.stats()).open).toBe(1);
      await new Promise((r) => setTimeout(r, 50));
    }

    let text = '';
    res.setEncoding('utf8');
    res.on('data', (c: string) => (text += c));
    const ended = new Promise<void>((resolve) => res.on('end', () => resolve()));
    res.resume(); // explicitly paused: a 'data' listener alone does not restart it
    await ended;
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    const chunks = text.split('\n\n').filter((f) => f && f !== 'data: [DONE]');
    let content = '';
    for (const f of chunks) content += JSON.parse(f.slice(6)).choices[0]?.delta.content ?? '';
    expect(content).toBe(`You said: ${prompt}`);
    await noOpenUpstream(rig);
  }, 60_000);
});
