import { createReadStream, existsSync, statSync } from 'node:fs';
import { extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Routes } from '../../pipeline/gateway.js';
import { adminErrors } from '../../admin/errors.js';

// The web console: files Vite built into dist/console-web at `npm run build`, served as they are.
// Three levels up is the project root whether this runs from src/ (tests) or dist/ (npm start).
export const CONSOLE_DIR = fileURLToPath(new URL('../../../dist/console-web/', import.meta.url));

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
};

export function registerConsoleRoutes(app: Routes, dir = CONSOLE_DIR): void {
  const root = resolve(dir);
  const index = join(root, 'index.html');

  const sendIndex = async (_request: unknown, reply: import('../../pipeline/request.js').Reply) => {
    if (!existsSync(index)) throw adminErrors.unavailable('The console is not built: run `npm run build` (or `npm start`, which builds it).');
    return reply.header('content-type', TYPES['.html']).header('cache-control', 'no-store').send(createReadStream(index));
  };
  const hide = { schema: { hide: true }, adminPublic: true };
  app.get('/console', hide, sendIndex);
  app.get('/console/', hide, sendIndex);
  app.get<{ Params: { '*': string } }>('/console/*', hide, async (request, reply) => {
    const rel = request.params['*'];
    // Hashed bundle files are immutable; any other path is a page of the single-page app.
    if (!rel.startsWith('assets/')) return sendIndex(request, reply);
    const file = resolve(root, rel);
    if (!file.startsWith(root + sep) || !existsSync(file) || !statSync(file).isFile()) throw adminErrors.notFound(`The file ${JSON.stringify(rel.slice(0, 100))}`);
    return reply
      .header('content-type', TYPES[extname(file)] ?? 'application/octet-stream')
      .header('cache-control', 'public, max-age=31536000, immutable')
      .send(createReadStream(file));
  });
}
