import { PassThrough, Writable } from 'node:stream';
import type { Gateway } from '../../src/pipeline/gateway.js';
import { buildApp } from '../../src/app.js';
import type { Services } from '../../src/services.js';
import { principalOf } from '../../src/auth/hook.js';
import { limitModel } from '../../src/pipeline/steps.js';
import { eventually } from './eventually.js';

/**
 * A second app on the gateway's services with extra `auth: true` test routes, so the limit hooks
 * can be watched from inside a handler: how many handlers are in flight, when they may finish.
 */
export interface ProbeApp {
  url: string;
  app: Gateway;
  /** Handlers of /v1/__probe/slow currently running, and the most ever seen at once. */
  inFlight: number;
  maxInFlight: number;
  /** Lets every waiting /v1/__probe/slow handler finish. */
  open(): void;
  /** Makes later /v1/__probe/slow handlers wait again. */
  shut(): void;
  /** Bodies of /v1/__probe/stream responses still open, oldest first. */
  streams: PassThrough[];
  close(): Promise<void>;
}

export async function startProbeApp(services: Services): Promise<ProbeApp> {
  const app = buildApp(services, { logStream: new Writable({ write: (_c, _e, cb) => cb() }) });
  let release: () => void = () => undefined;
  let gate = new Promise<void>((r) => (release = r));
  const probe: ProbeApp = {
    url: '',
    app,
    inFlight: 0,
    maxInFlight: 0,
    open: () => release(),
    shut: () => {
      gate = new Promise<void>((r) => (release = r));
    },
    streams: [],
    close: () => app.close(),
  };

  app.get('/v1/__probe/slow', { auth: true }, async (request) => {
    probe.inFlight++;
    probe.maxInFlight = Math.max(probe.maxInFlight, probe.inFlight);
    try {
      // Like a real route, stop working when the client goes away.
      await Promise.race([gate, new Promise<void>((r) => request.raw.once('close', () => r()))]);
    } finally {
      probe.inFlight--;
    }
    return { ok: true };
  });

  app.get('/v1/__probe/stream', { auth: true }, async (_request, reply) => {
    const body = new PassThrough();
    body.write('data: {"n":1}\n\n');
    probe.streams.push(body);
    return reply.header('content-type', 'text/event-stream').send(body);
  });

  app.post('/v1/__probe/echo', { auth: true }, async () => ({ ok: true }));

  // A static route under a parameter path: the router prefers it.
  app.get('/v1/video/generations/__probe-static', { auth: true }, async () => ({ probe: 'static' }));

  // A route whose model is not in a JSON body (like multipart image edits) counts it itself.
  app.post<{ Querystring: { model: string } }>('/v1/__probe/upload', { auth: true }, async (request) => {
    await limitModel(request, request.query.model);
    return { ok: true };
  });

  // Reserves and settles credit the way a real route does, after the limit hooks.
  app.post('/v1/__probe/charge', { auth: true }, async (request) => {
    const hold = await services.credit.reserve(principalOf(request), 100);
    await services.credit.settle(hold, 100);
    return { ok: true };
  });

  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  probe.url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  return probe;
}

/** Polls `check` until it is true; fails after a generous deadline (machines are noisy). */
export async function until(check: () => boolean | Promise<boolean>, what: string, deadlineMs = 15_000): Promise<void> {
  await eventually(check, deadlineMs, what, 10);
}
