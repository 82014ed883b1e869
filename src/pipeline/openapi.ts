import type { Route } from './request.js';

// GET /openapi.json: every route not hidden, with its summary, tags, path parameters, JSON body and
// answer schemas, as OpenAPI 3.0 describes an API.

const METHODS_DOCUMENTED = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);

/** `/v1/video/generations/:task_id` → `/v1/video/generations/{task_id}`; a trailing `*` → `{path}`. */
function openApiPath(url: string): { path: string; names: string[] } {
  const names: string[] = [];
  const path = url
    .split('/')
    .map((seg) => {
      if (seg.startsWith(':')) {
        names.push(seg.slice(1));
        return `{${seg.slice(1)}}`;
      }
      if (seg === '*') {
        names.push('path');
        return '{path}';
      }
      return seg;
    })
    .join('/');
  return { path, names };
}

/** The header every route that costs money takes (docs/limits.md, "Idempotent requests"). */
const IDEMPOTENCY_KEY = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Makes a retry safe: the same API key, Idempotency-Key and request (method, path, body) get the first answer again, with Idempotent-Replayed: true, and cost nothing more. 1 to 255 printable ASCII characters; kept 24 hours by default.',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7E]+$' },
};

/** The answers the header adds, by status. */
const IDEMPOTENCY_ANSWERS: Record<string, string> = {
  '400': 'invalid_idempotency_key: the Idempotency-Key header is empty, longer than 255 characters, not printable ASCII or sent more than once (param "Idempotency-Key").',
  '409': 'idempotency_in_progress: the first request with this Idempotency-Key is still running after the wait (idempotency.wait_s); retry after Retry-After seconds.',
  '422': 'idempotency_key_reused: this Idempotency-Key was already used with a different request (method, path or body).',
};

/** A route's operation with the Idempotency-Key header, its three refusals and the replay header of its answers. */
function withIdempotency(parameters: object[], responses: Record<string, object>): void {
  parameters.push({ $ref: '#/components/parameters/IdempotencyKey' });
  for (const [status, text] of Object.entries(IDEMPOTENCY_ANSWERS)) {
    const known = responses[status] as { description?: string } | undefined;
    responses[status] = known ? { ...known, description: `${known.description === 'Default Response' ? '' : `${known.description}; `}${text}` } : { description: text };
  }
  for (const [status, answer] of Object.entries(responses)) {
    if (!status.startsWith('2')) continue;
    responses[status] = { ...answer, headers: { 'Idempotent-Replayed': { description: '"true" when this is the kept answer of an earlier request with the same Idempotency-Key.', schema: { type: 'string', enum: ['true'] } } } };
  }
}

/** A schema as plain JSON (TypeBox's symbol keys left out). */
const plain = (schema: object): object => JSON.parse(JSON.stringify(schema)) as object;

export function openApiDocument(routes: readonly Route[]): object {
  const paths: Record<string, Record<string, object>> = {};
  for (const r of routes) {
    const s = r.options.schema ?? {};
    if (s.hide || !METHODS_DOCUMENTED.has(r.method)) continue;
    const { path, names } = openApiPath(r.url);
    const params = s.params as { properties?: Record<string, object> } | undefined;
    const query = s.querystring as { properties?: Record<string, object>; required?: string[] } | undefined;
    const responses: Record<string, object> = {};
    for (const [status, schema] of Object.entries(s.response ?? {})) responses[status] = { description: 'Default Response', content: { 'application/json': { schema: plain(schema) } } };
    if (!Object.keys(responses).length) responses['200'] = { description: 'Default Response' };
    const parameters: object[] = [
      ...names.map((name) => ({ name, in: 'path', required: true, schema: plain(params?.properties?.[name] ?? { type: 'string' }) })),
      ...Object.entries(query?.properties ?? {}).map(([name, schema]) => ({ name, in: 'query', required: query?.required?.includes(name) ?? false, schema: plain(schema) })),
    ];
    if (r.options.idempotent) withIdempotency(parameters, responses);
    const operation: Record<string, unknown> = {
      ...(s.summary ? { summary: s.summary } : {}),
      ...(s.tags ? { tags: s.tags } : {}),
      parameters,
      ...(s.body ? { requestBody: { required: true, content: { 'application/json': { schema: plain(s.body) } } } } : {}),
      responses,
    };
    if (r.options.auth) operation.security = [{ bearerAuth: [] }];
    (paths[path] ??= {})[r.method.toLowerCase()] = operation;
  }
  return {
    openapi: '3.0.3',
    info: { title: 'mediagate', version: '0.1.0', description: 'Gateway to generative models: chat, images and video tasks.' },
    components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } }, parameters: { IdempotencyKey: IDEMPOTENCY_KEY } },
    paths,
  };
}
