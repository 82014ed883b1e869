import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FaultBook, applyConnectionFault, parseFault } from './faults.js';
import { sendJson, type SimContext, type SimOptions, type SimRoute, type SimState } from './router.js';
import { catalogueRoutes } from './catalogue.js';
import { arkVideoRoutes } from './ark-video.js';
import { veoVideoRoutes } from './veo-video.js';
import { klingVideoRoutes } from './kling-video.js';
import { wanVideoRoutes } from './wan-video.js';
import { wanImageRoutes } from './wan-images.js';
import { hailuoVideoRoutes } from './hailuo-video.js';
import { xaiVideoRoutes } from './xai-video.js';
import { zhipuVideoRoutes } from './zhipu-video.js';
import { viduVideoRoutes } from './vidu-video.js';
import { runwayVideoRoutes } from './runway-video.js';
import { lumaVideoRoutes } from './luma-video.js';
import { pixverseVideoRoutes } from './pixverse-video.js';
import { jimengVideoRoutes } from './jimeng-video.js';
import { falVideoRoutes } from './fal-video.js';
import { replicateVideoRoutes } from './replicate-video.js';
import { vertexVideoRoutes } from './vertex-video.js';
import { imageRoutes } from './images.js';
import { bflImageRoutes } from './bfl-images.js';
import { geminiImageRoutes } from './gemini-images.js';
import { klingImageRoutes } from './kling-images.js';
import { minimaxImageRoutes } from './minimax-images.js';
import { ideogramImageRoutes } from './ideogram-images.js';
import { recraftImageRoutes } from './recraft-images.js';
import { stabilityImageRoutes } from './stability-images.js';
import { falImageRoutes } from './fal-images.js';
import { replicateImageRoutes } from './replicate-images.js';
import { openaiChatRoutes } from './openai-chat.js';
import { anthropicMessagesRoutes } from './anthropic-messages.js';
import { openaiResponsesRoutes } from './openai-responses.js';
import { geminiChatRoutes } from './gemini-chat.js';
import { chatControlRoutes } from './chat-engine.js';
import { balanceRoutes } from './balances.js';
import { openaiError } from './shapes.js';
import { saveTasksNow } from './video-common.js';

export interface Simulator {
  url: string;
  port: number;
  state: SimState;
  close(): Promise<void>;
}

const MAX_BODY = 64 * 1024 * 1024;

function controlRoutes(): SimRoute[] {
  return [
    {
      name: 'control.faults.add',
      method: 'POST',
      pattern: /^\/__sim\/faults$/,
      auth: false,
      handle(ctx) {
        let body: Record<string, unknown>;
        try {
          body = JSON.parse(ctx.body.toString('utf8')) as Record<string, unknown>;
        } catch {
          return sendJson(ctx.res, 400, { error: 'body must be JSON' });
        }
        const f = parseFault(body ?? {});
        if (typeof f === 'string') return sendJson(ctx.res, 400, { error: f });
        ctx.state.faults.add(f);
        sendJson(ctx.res, 200, { faults: ctx.state.faults.list() });
      },
    },
    {
      name: 'control.faults.clear',
      method: 'DELETE',
      pattern: /^\/__sim\/faults$/,
      auth: false,
      handle(ctx) {
        ctx.state.faults.clear();
        sendJson(ctx.res, 200, { faults: [] });
      },
    },
    {
      name: 'control.stats',
      method: 'GET',
      pattern: /^\/__sim\/stats$/,
      auth: false,
      handle(ctx) {
        sendJson(ctx.res, 200, { counts: Object.fromEntries(ctx.state.counts), disconnects: Object.fromEntries(ctx.state.disconnects), open: ctx.state.open - 1 });
      },
    },
    {
      // The trace context requests arrived with (W3C Trace Context), for tests of trace propagation.
      name: 'control.traceparents',
      method: 'GET',
      pattern: /^\/__sim\/traceparents$/,
      auth: false,
      handle(ctx) {
        sendJson(ctx.res, 200, { requests: ctx.state.traceparents });
      },
    },
  ];
}

/** Route modules of the simulator's parts; each provider part adds its own file here. */
export function simulatorRoutes(): SimRoute[] {
  return [
    ...controlRoutes(),
    ...catalogueRoutes(),
    // Kling's image part goes before OpenAI's, whose path it shares.
    ...klingImageRoutes(),
    ...imageRoutes(),
    ...bflImageRoutes(),
    ...geminiImageRoutes(),
    ...minimaxImageRoutes(),
    ...ideogramImageRoutes(),
    ...recraftImageRoutes(),
    ...stabilityImageRoutes(),
    ...falImageRoutes(),
    ...replicateImageRoutes(),
    ...arkVideoRoutes(),
    ...veoVideoRoutes(),
    ...vertexVideoRoutes(),
    ...klingVideoRoutes(),
    ...wanVideoRoutes(),
    ...wanImageRoutes(),
    ...hailuoVideoRoutes(),
    ...xaiVideoRoutes(),
    ...zhipuVideoRoutes(),
    ...viduVideoRoutes(),
    ...runwayVideoRoutes(),
    ...lumaVideoRoutes(),
    ...pixverseVideoRoutes(),
    ...jimengVideoRoutes(),
    ...falVideoRoutes(),
    ...replicateVideoRoutes(),
    ...openaiChatRoutes(),
    ...openaiResponsesRoutes(),
    ...anthropicMessagesRoutes(),
    ...geminiChatRoutes(),
    ...chatControlRoutes(),
    ...balanceRoutes(),
  ];
}

export async function startSimulator(
  opts: Partial<SimOptions> & { port?: number; host?: string } = {},
  routes: SimRoute[] = simulatorRoutes(),
): Promise<Simulator> {
  const state: SimState = {
    faults: new FaultBook(),
    counts: new Map(),
    disconnects: new Map(),
    traceparents: [],
    open: 0,
    baseUrl: '',
    options: { videoSeconds: opts.videoSeconds ?? 10, urlTtlS: opts.urlTtlS ?? 86400, requireAuth: opts.requireAuth ?? true, signingSecret: opts.signingSecret, tasksFile: opts.tasksFile },
    parts: new Map(),
  };

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://sim');
    const route = routes.find((r) => r.method === req.method && r.pattern.test(url.pathname) && (!r.claims || r.claims(req, url, state)));
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('error', () => {});
    res.on('error', () => {});
    req.on('end', () => {
      if (!route) return sendJson(res, 404, openaiError(`no route ${req.method} ${url.pathname}`, 'not_found'));
      state.counts.set(route.name, (state.counts.get(route.name) ?? 0) + 1);
      const traceparent = req.headers.traceparent;
      if (typeof traceparent === 'string') {
        if (state.traceparents.length >= 256) state.traceparents.shift();
        const tracestate = req.headers.tracestate;
        state.traceparents.push({ route: route.name, traceparent: traceparent.slice(0, 128), ...(typeof tracestate === 'string' ? { tracestate: tracestate.slice(0, 512) } : {}) });
      }
      const ctx: SimContext = { req, res, params: route.pattern.exec(url.pathname)!.slice(1), url, body: Buffer.concat(chunks), state };
      state.open++;
      res.once('close', () => {
        state.open--;
        if (!res.writableFinished && !ctx.closedBySimulator) state.disconnects.set(route.name, (state.disconnects.get(route.name) ?? 0) + 1);
      });
      void dispatch(route, ctx);
    });
  });
  server.keepAliveTimeout = 65_000;

  async function dispatch(route: SimRoute, ctx: SimContext): Promise<void> {
    try {
      if (route.auth && state.options.requireAuth) {
        if (route.authenticate) {
          if (!route.authenticate(ctx)) return;
        } else if (!ctx.req.headers.authorization && !ctx.req.headers['x-api-key']) {
          return sendJson(ctx.res, 401, openaiError('missing API key', 'invalid_api_key'));
        }
      }
      if (route.auth || route.faults) {
        const fault = state.faults.take(route.name);
        if (fault) {
          if (fault.kind === 'latency') await new Promise((r) => setTimeout(r, fault.ms));
          else if (fault.kind === 'status') return sendStatusFault(route, ctx, fault.status!);
          else if (fault.kind === 'truncate') ctx.truncate = true;
          else {
            if (fault.kind === 'reset') ctx.closedBySimulator = true;
            if (applyConnectionFault(fault, ctx.res)) return;
          }
        }
      }
      await route.handle(ctx);
    } catch (err) {
      if (!ctx.res.headersSent) sendJson(ctx.res, 500, openaiError(`simulator error: ${(err as Error).message}`, 'internal_error'));
      else ctx.res.destroy();
    }
  }

  function sendStatusFault(route: SimRoute, ctx: SimContext, status: number): void {
    const headers: Record<string, string> = status === 429 ? { 'retry-after': '1' } : {};
    const body = route.errorBody ? route.errorBody(status, `injected fault ${status}`) : openaiError(`injected fault ${status}`, `fault_${status}`);
    sendJson(ctx.res, status, body, headers);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  state.baseUrl = `http://${opts.host ?? '127.0.0.1'}:${port}`;
  return {
    url: state.baseUrl,
    port,
    state,
    close: () =>
      new Promise<void>((resolve) => {
        saveTasksNow(state);
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
