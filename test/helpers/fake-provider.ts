import { createServer, type Server } from 'node:http';

/**
 * A scriptable provider on a loopback port: Ark video tasks (`/api/v3/contents/generations/tasks`)
 * and OpenAI chat (`/v1/chat/completions`), answering whatever the test decides — the shapes a
 * misbehaving or hostile provider sends, which the simulator does not.
 */
export interface FakeProvider {
  url: string;
  /** Requests seen, by path. */
  seen: string[];
  close(): Promise<void>;
}

export interface FakeProviderScript {
  /** The task object answered to GET …/tasks/{id}, from the prompt the task was created with. */
  videoTask?: (prompt: string, id: string) => Record<string, unknown>;
  /** Status and JSON body answered to a chat completion. */
  chat?: (body: Record<string, any>) => { status: number; json: unknown };
}

export async function startFakeProvider(script: FakeProviderScript): Promise<FakeProvider> {
  const prompts = new Map<string, string>();
  const seen: string[] = [];
  let n = 0;
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += String(c)));
    req.on('end', () => {
      const url = req.url ?? '';
      seen.push(`${req.method} ${url}`);
      const send = (status: number, json: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(json));
      };
      if (req.method === 'POST' && url === '/api/v3/contents/generations/tasks') {
        const body = JSON.parse(raw) as { content?: Array<{ text?: string }> };
        const id = `cgt-20260101000000-fake${++n}`;
        prompts.set(id, body.content?.[0]?.text ?? '');
        return send(200, { id });
      }
      const task = /^\/api\/v3\/contents\/generations\/tasks\/([^/?]+)$/.exec(url);
      if (req.method === 'GET' && task && script.videoTask) {
        const id = decodeURIComponent(task[1]);
        if (!prompts.has(id)) return send(404, { error: { code: 'ResourceNotFound', message: 'no such task' } });
        return send(200, { id, model: 'm', created_at: 1, updated_at: Math.floor(Date.now() / 1000), ...script.videoTask(prompts.get(id)!, id) });
      }
      if (req.method === 'POST' && url === '/v1/chat/completions' && script.chat) {
        const r = script.chat(JSON.parse(raw) as Record<string, any>);
        return send(r.status, r.json);
      }
      send(404, { error: { message: 'not here' } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    seen,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
