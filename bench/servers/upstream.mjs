// The instant upstream of every benchmark: mediagate's own simulator (from dist/), plus one
// bench route in front of its chat route so streams can be held open on demand.
//   stream: true, model "bench-hold" → the first chunk at once, then one content chunk every
//     --interval-ms until --hold-ms has passed, then the usage chunk and [DONE] (holds streams open);
//   stream: true, any other model → five chunks and [DONE] at once (time to first token);
//   not streamed → the simulator's own chat route when it has one, else an instant answer here.
// Prints `LISTENING <url>` once ready.
import { parseArgs } from 'node:util';
import { startSimulator, simulatorRoutes } from '../../dist/simulator/server.js';

const { values } = parseArgs({
  options: { 'hold-ms': { type: 'string', default: '10000' }, 'interval-ms': { type: 'string', default: '1000' } },
});
const holdMs = Number(values['hold-ms']);
const intervalMs = Number(values['interval-ms']);

const routes = simulatorRoutes();
const simChat = routes.find((r) => r.name === 'openai.chat');

const CONTENT = 'Hello! This is an instant answer from the benchmark upstream.';
let seq = 0;

function completion(model) {
  return {
    id: `chatcmpl-bench${++seq}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: CONTENT, refusal: null }, logprobs: null, finish_reason: 'stop' }],
    usage: { prompt_tokens: 12, completion_tokens: 14, total_tokens: 26 },
    system_fingerprint: 'fp_bench',
  };
}

function chunk(id, model, delta, finish = null, usage = undefined) {
  const c = { id, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] };
  if (usage !== undefined) {
    c.choices = [];
    c.usage = usage;
  }
  return `data: ${JSON.stringify(c)}\n\n`;
}

function stream(res, model, hold) {
  const id = `chatcmpl-bench${++seq}`;
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.write(chunk(id, model, { role: 'assistant', content: '' }));
  let sent = 0;
  const total = hold ? Math.max(1, Math.floor(holdMs / intervalMs)) : 3;
  const finish = () => {
    res.write(chunk(id, model, {}, 'stop'));
    res.write(chunk(id, model, {}, null, { prompt_tokens: 12, completion_tokens: total, total_tokens: 12 + total }));
    res.end('data: [DONE]\n\n');
  };
  if (!hold) {
    for (; sent < total; sent++) res.write(chunk(id, model, { content: `tok${sent} ` }));
    return finish();
  }
  const timer = setInterval(() => {
    if (res.destroyed) return clearInterval(timer);
    res.write(chunk(id, model, { content: `tok${sent} ` }));
    if (++sent >= total) {
      clearInterval(timer);
      finish();
    }
  }, intervalMs);
  res.on('close', () => clearInterval(timer));
}

const benchChat = {
  name: 'bench.chat',
  method: 'POST',
  pattern: /^\/v1\/chat\/completions$/,
  auth: true,
  handle(ctx) {
    let body;
    try {
      body = JSON.parse(ctx.body.toString('utf8'));
    } catch {
      body = {};
    }
    const model = typeof body.model === 'string' ? body.model : 'bench-chat';
    // Streams are always the bench's own (the simulator paces its streams like a real model).
    if (body.stream === true) return stream(ctx.res, model, model === 'bench-hold');
    if (simChat) return simChat.handle(ctx);
    const text = JSON.stringify(completion(model));
    ctx.res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    ctx.res.end(text);
  },
};

const sim = await startSimulator({ port: 0, host: '127.0.0.1', videoSeconds: 1 }, [benchChat, ...routes]);
process.stdout.write(`LISTENING ${sim.url} ${simChat ? 'simulator-chat' : 'bench-chat'}\n`);
const stop = () => void sim.close().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
