import { createRequire } from 'node:module';
import type * as Undici from 'undici';

// The part of undici the gateway uses — Agent, request(), the connector, the error classes and two
// header helpers — loaded from undici's own modules instead of its index. The index also loads
// fetch, WebSocket, EventSource, the HTTP cache (with its SQLite store), the mock agents and the
// proxy agents at import: ≈ 3 MB of heap the process would hold for its whole life and never
// use. The classes are the very ones the index exports (the same files, one module cache), so
// `instanceof` against errors thrown inside undici holds either way.
//
// The paths are undici's internal layout (pinned by package-lock.json); a moved file fails the
// first import of this module, at startup, not a request. test/unit/undici-subset.test.ts
// checks each export against the index's.

const load = createRequire(import.meta.url);
const lib = (path: string): unknown => load(`undici/lib/${path}`);

type CoreUtil = typeof Undici.util & { parseURL(url: string | URL): URL };

// Dispatcher methods (agent.request(), .stream(), …) are installed on the prototype by the
// index; done here the same way, so an Agent made through this module behaves as one made there.
const dispatcherClass = lib('dispatcher/dispatcher') as { prototype: object };
const api = lib('api/index.js') as { request: (this: Undici.Dispatcher, opts: object) => Promise<Undici.Dispatcher.ResponseData> };
Object.assign(dispatcherClass.prototype, api);

export const Agent = lib('dispatcher/agent') as typeof Undici.Agent;
export type Agent = Undici.Agent;
export const errors = lib('core/errors') as typeof Undici.errors;
export const buildConnector = lib('core/connect') as typeof Undici.buildConnector;
const core = lib('core/util') as CoreUtil;
export const util: typeof Undici.util = { parseHeaders: core.parseHeaders, headerNameToString: core.headerNameToString };

type RequestOptions = Parameters<typeof Undici.request>[1];

/**
 * undici's `request(url, options)`: the URL split into origin and path, on `options.dispatcher`
 * (undici's global Agent when absent), method GET (PUT with a body) unless given.
 */
function requestImpl(url: string | URL, opts: RequestOptions = {}): Promise<Undici.Dispatcher.ResponseData> {
  if (opts === null || typeof opts !== 'object') throw new errors.InvalidArgumentError('invalid opts');
  const parsed = core.parseURL(url);
  const dispatcher = opts.dispatcher ?? (lib('global') as { getGlobalDispatcher(): Undici.Dispatcher }).getGlobalDispatcher();
  return api.request.call(dispatcher, {
    ...opts,
    origin: parsed.origin,
    path: parsed.search ? `${parsed.pathname}${parsed.search}` : parsed.pathname,
    method: opts.method || (opts.body ? 'PUT' : 'GET'),
  });
}
export const request = requestImpl as typeof Undici.request;

export type { Dispatcher } from 'undici';
