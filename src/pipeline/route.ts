import { Ajv } from 'ajv';
import fastJson from 'fast-json-stringify';
import type { Handler, Route, RouteOptions, Serialize, Validate } from './request.js';

// A route as registered (request.ts holds its types) and as compiled once when the app starts: its
// validators and response serializers.

// Request schemas are checked as written: no type coercion, no removal of fields, the first error only, defaults applied.
const ajv = new Ajv({ coerceTypes: false, useDefaults: true, removeAdditional: false, addUsedSchema: false, allErrors: false, strict: false });
const compiled = new WeakMap<object, Validate>();

function validator(schema: object | undefined): Validate | null {
  if (!schema) return null;
  let v = compiled.get(schema);
  if (!v) {
    v = ajv.compile(schema) as Validate;
    compiled.set(schema, v);
  }
  return v;
}

export function makeRoute(method: string, url: string, options: RouteOptions, handler: Handler): Route {
  const steps = options.onRequest === undefined ? [] : Array.isArray(options.onRequest) ? options.onRequest : [options.onRequest];
  return {
    method,
    url,
    options,
    handler,
    steps,
    multipart: options.multipart ?? null,
    validateParams: null,
    validateQuery: null,
    validateBody: null,
    serializers: new Map(),
  };
}

/** Compiles a route's validators and serializers (once, when the app starts). */
export function compileRoute(route: Route): void {
  const s = route.options.schema;
  if (!s) return;
  route.validateParams = validator(s.params);
  route.validateQuery = validator(s.querystring);
  route.validateBody = validator(s.body);
  for (const status in s.response ?? {}) route.serializers.set(Number(status), fastJson(s.response![Number(status)]) as Serialize);
}
