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
    const operation: Record<string, unknown> = {
      ...(s.summary ? { summary: s.summary } : {}),
      ...(s.tags ? { tags: s.tags } : {}),
      parameters: [
        ...names.map((name) => ({ name, in: 'path', required: true, schema: plain(params?.properties?.[name] ?? { type: 'string' }) })),
        ...Object.entries(query?.properties ?? {}).map(([name, schema]) => ({ name, in: 'query', required: query?.required?.includes(name) ?? false, schema: plain(schema) })),
      ],
      ...(s.body ? { requestBody: { required: true, content: { 'application/json': { schema: plain(s.body) } } } } : {}),
      responses,
    };
    if (r.options.auth) operation.security = [{ bearerAuth: [] }];
    (paths[path] ??= {})[r.method.toLowerCase()] = operation;
  }
  return {
    openapi: '3.0.3',
    info: { title: 'mediagate', version: '0.1.0', description: 'Gateway to generative models: chat, images and video tasks.' },
    components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } } },
    paths,
  };
}
