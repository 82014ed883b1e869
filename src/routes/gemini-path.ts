import type { GatewayRequest } from '../pipeline/request.js';
import { noteUsageModel } from '../limits/usage-backstop.js';

// The `/v1beta/models/{model}:{method}` path both Gemini route files read (gemini.ts for chat,
// gemini-videos.ts for :predictLongRunning).

/** The model and method parts of the path (a malformed escape in the model is kept as sent). */
export function splitModelPath(path: string): { model: string; action: string } {
  const at = path.lastIndexOf(':');
  const raw = at < 0 ? path : path.slice(0, at);
  let model = raw;
  try {
    model = decodeURIComponent(raw);
  } catch {
    // Not a valid escape: no configured model has such a name, so the handler answers 404.
  }
  return { model, action: at < 0 ? '' : path.slice(at + 1) };
}

/**
 * The model is in the path, not the body: noted before the body is read, so a request refused
 * before its handler (a bad body) is recorded under the model it named.
 */
export async function noteModelOfPath(request: GatewayRequest): Promise<void> {
  noteUsageModel(request, splitModelPath((request.params as { '*'?: string })['*'] ?? '').model);
}
