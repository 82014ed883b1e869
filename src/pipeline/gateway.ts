import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import FindMyWay from 'find-my-way';
import type { Logger } from 'pino';
import type { GatewayError } from '../http/errors.js';
import { RouteTable } from '../http/route-table.js';
import { badPathError, renderClientError } from '../http/framework-errors.js';
import { GatewayRequest, Reply, type Handler, type Route, type RouteOptions, type RouteStep, type RouteTypes } from './request.js';
import { compileRoute, makeRoute } from './route.js';
import { Exchange, type PipelineDeps } from './steps.js';
import { openApiDocument } from './openapi.js';

// The gateway's HTTP application: a node:http server, the router (find-my-way) and the routes,
// every request handed to the one pipeline (steps.ts). Routes are registered as
// `app.get(url, options, handler)`; a handler returns the answer's value (sent as JSON, or as it
// is for a string, Buffer or stream) or answers through `reply` itself.

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD';

interface Shorthand {
  <G extends RouteTypes = RouteTypes>(url: string, handler: Handler<G>): void;
  <G extends RouteTypes = RouteTypes>(url: string, options: RouteOptions, handler: Handler<G>): void;
}

/** What route modules register on: the app itself, or a scope of it with options every route shares. */
export interface Routes {
  get: Shorthand;
  post: Shorthand;
  put: Shorthand;
  patch: Shorthand;
  delete: Shorthand;
  route<G extends RouteTypes = RouteTypes>(definition: RouteOptions & { method: Method | Method[]; url: string; handler: Handler<G> }): void;
  /** Routes registered through the scope get `defaults` (its route steps run before their own). */
  scope(defaults: RouteOptions): Routes;
  addConstraintStrategy(strategy: ConstraintStrategy): void;
  hasConstraintStrategy(name: string): boolean;
}

/** A find-my-way constraint: routes on one path told apart by something else of the request. */
export interface ConstraintStrategy {
  name: string;
  mustMatchWhenDerived?: boolean;
  storage(): { get(value: string): unknown; set(value: string, store: unknown): void };
  deriveConstraint(req: IncomingMessage): string;
}

export interface GatewayOptions {
  log: Logger;
  /** node:http server options (timeouts). */
  server: { requestTimeout: number; headersTimeout: number; connectionsCheckingInterval: number };
  /** Path parameters longer than this are refused (400) before routing. */
  maxParamLength: number;
}

const NO_PARAMS: Record<string, string> = Object.freeze({}) as Record<string, string>;
/** A query string left as sent by the router; the request parses it on first ask. */
const RAW_QUERY = (search: string) => search;

export class Gateway implements Routes {
  readonly server: Server;
  readonly log: Logger;
  readonly routeTable = new RouteTable();
  private readonly routes: Route[] = [];
  private readonly strategies: ConstraintStrategy[] = [];
  private readonly router;
  private compiled = false;
  private closing = false;

  constructor(
    private readonly deps: PipelineDeps,
    opts: GatewayOptions,
  ) {
    this.log = opts.log;
    this.router = FindMyWay({
      maxParamLength: opts.maxParamLength,
      querystringParser: RAW_QUERY,
      onBadUrl: () => 'bad_url',
      onMaxParamLength: () => 'max_param_length',
    });
    this.server = createServer({ requestTimeout: opts.server.requestTimeout, headersTimeout: opts.server.headersTimeout, connectionsCheckingInterval: opts.server.connectionsCheckingInterval }, (req, res) => this.serve(req, res));
    // Idle keep-alive connections outlive a proxy's own pool timeout (60 s for most).
    this.server.keepAliveTimeout = 72_000;
    this.server.on('clientError', renderClientError);
  }

  get: Shorthand = (url: string, a: RouteOptions | Handler, b?: Handler) => this.add(['GET'], url, a, b);
  post: Shorthand = (url: string, a: RouteOptions | Handler, b?: Handler) => this.add(['POST'], url, a, b);
  put: Shorthand = (url: string, a: RouteOptions | Handler, b?: Handler) => this.add(['PUT'], url, a, b);
  patch: Shorthand = (url: string, a: RouteOptions | Handler, b?: Handler) => this.add(['PATCH'], url, a, b);
  delete: Shorthand = (url: string, a: RouteOptions | Handler, b?: Handler) => this.add(['DELETE'], url, a, b);

  route<G extends RouteTypes = RouteTypes>({ method, url, handler, ...options }: RouteOptions & { method: Method | Method[]; url: string; handler: Handler<G> }): void {
    this.add(Array.isArray(method) ? method : [method], url, options, handler as unknown as Handler);
  }

  scope(defaults: RouteOptions): Routes {
    return scoped(this, defaults);
  }

  addConstraintStrategy(strategy: ConstraintStrategy): void {
    this.strategies.push(strategy);
    this.router.addConstraintStrategy(strategy as never);
  }

  hasConstraintStrategy(name: string): boolean {
    return this.strategies.some((s) => s.name === name);
  }

  private add(methods: string[], url: string, a: RouteOptions | Handler, b?: Handler): void {
    if (this.compiled) throw new Error(`route ${url} registered after the app started`);
    const options = typeof a === 'function' ? {} : a;
    const handler = (typeof a === 'function' ? a : b) as Handler;
    for (const method of methods) {
      const route = makeRoute(method, url, options, handler);
      this.routes.push(route);
      const constraints = options.constraints ? { constraints: options.constraints } : {};
      this.router.on(method as Method, url, constraints, () => undefined, route);
      this.routeTable.add(method, url, Boolean(options.auth), options.billable);
      // A GET route answers HEAD too (its headers, no body).
      if (method === 'GET' && !this.router.hasRoute('HEAD', url, options.constraints ?? {})) {
        this.router.on('HEAD', url, constraints, () => undefined, route);
        this.routeTable.add('HEAD', url, Boolean(options.auth), options.billable);
      }
    }
  }

  /** Compiles every route's validators and serializers and the router (once). */
  async ready(): Promise<void> {
    if (this.compiled) return;
    this.compiled = true;
    for (const r of this.routes) compileRoute(r);
  }

  /** The OpenAPI document of every route not hidden. */
  openapi(): object {
    return openApiDocument(this.routes);
  }

  async listen(opts: { host: string; port: number }): Promise<string> {
    await this.ready();
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(opts.port, opts.host, () => {
        this.server.removeListener('error', reject);
        resolve();
      });
    });
    const a = this.server.address() as AddressInfo;
    return `http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}`;
  }

  /**
   * Stops taking connections, answers every request that still arrives (on a connection that was
   * busy) 503 `shutting_down`, closes idle connections, and resolves once every connection ended.
   */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    const closed = this.server.listening ? new Promise<void>((resolve) => this.server.close(() => resolve())) : Promise.resolve();
    this.server.closeIdleConnections();
    await closed;
  }

  private serve(req: IncomingMessage, res: ServerResponse): void {
    const started = performance.now();
    const url = req.url ?? '/';
    const method = req.method ?? 'GET';
    const derived = this.strategies.length ? this.derive(req) : undefined;
    const found = this.router.find(method as Method, url, derived);
    let route: Route | null = null;
    let params = NO_PARAMS;
    let search: string;
    let unrouted: (() => GatewayError) | null = null;
    if (found === null) {
      unrouted = () => this.routeTable.unrouted(method, url);
      search = searchOf(url);
    } else if (found.store === null) {
      const problem = (found.handler as unknown as () => 'bad_url' | 'max_param_length')();
      unrouted = () => badPathError(problem, url);
      search = searchOf(url);
    } else {
      route = found.store as Route;
      params = found.params as Record<string, string>;
      search = found.searchParams as unknown as string;
    }
    const request = new GatewayRequest(req, route, url, search, this.log, started);
    request.params = params;
    request.limits = this.deps.limits;
    void new Exchange(this.deps, request, new Reply(res, request)).run(unrouted, this.closing);
  }

  private derive(req: IncomingMessage): Record<string, string> {
    const out: Record<string, string> = {};
    for (const s of this.strategies) out[s.name] = s.deriveConstraint(req);
    return out;
  }
}

function searchOf(url: string): string {
  const q = url.indexOf('?');
  return q < 0 ? '' : url.slice(q + 1);
}

function scoped(app: Gateway, defaults: RouteOptions): Routes {
  const merge = (o: RouteOptions): RouteOptions => {
    const own: RouteStep[] = o.onRequest === undefined ? [] : Array.isArray(o.onRequest) ? o.onRequest : [o.onRequest];
    const shared: RouteStep[] = defaults.onRequest === undefined ? [] : Array.isArray(defaults.onRequest) ? defaults.onRequest : [defaults.onRequest];
    return { ...defaults, ...o, onRequest: [...shared, ...own] };
  };
  const short =
    (method: Method): Shorthand =>
    (url: string, a: RouteOptions | Handler, b?: Handler) =>
      typeof a === 'function' ? app.route({ method, url, ...merge({}), handler: a }) : app.route({ method, url, ...merge(a), handler: b! });
  return {
    get: short('GET'),
    post: short('POST'),
    put: short('PUT'),
    patch: short('PATCH'),
    delete: short('DELETE'),
    route: ({ method, url, handler, ...o }) => app.route({ method, url, ...merge(o), handler: handler as unknown as Handler }),
    scope: (more) => scoped(app, merge(more)),
    addConstraintStrategy: (s) => app.addConstraintStrategy(s),
    hasConstraintStrategy: (n) => app.hasConstraintStrategy(n),
  };
}
