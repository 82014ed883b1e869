import type { ResponsesRepo } from '../store/repos/responses.js';
import { localId } from '../formats/hub/util.js';
import { GatewayError } from '../http/errors.js';

// What a Responses request's stored state (previous_response_id, item_reference) expands to, within
// a byte budget: a few bytes of ids may name megabytes of stored items, so every reference and each
// earlier turn is counted from stored sizes before any body is read, and the request is refused
// as soon as the count passes the budget.

type Json = Record<string, any>;

export interface ResolvedInput {
  /** What the upstream is sent: the earlier turns, then this request's items. */
  input: Json[];
  /** This request's items with references resolved: what its response stores as its input. */
  own: Json[];
  /** The items this request introduced (to find by id later). */
  fresh: Json[];
  parentId: string | null;
  /** The responses it uses (its conversation's earlier turns, those holding items it references). */
  renew: string[];
  depth: number;
  /** At least the bytes of the expanded request as JSON (counted, never serialized to measure). */
  bytes: number;
}

/** The byte budget and how a refusal names it. */
export interface Budget {
  bytes: number;
  /** The limit as configured, in MB, for the message. */
  mb: number;
}

export function notFound(what: string, id: string, param: string | null = null): GatewayError {
  return new GatewayError(404, 'not_found', `${what} with id '${id}' not found.`, {}, param);
}

/** A conversation that needs an earlier response no longer stored. */
export function lostTurn(id: string, missing: string, param: string | null): GatewayError {
  return new GatewayError(404, 'not_found', `Response '${id}' continues response '${missing}', which is no longer stored (expired, deleted or evicted).`, {}, param);
}

function tooLarge(budget: Budget, what: string): GatewayError {
  return new GatewayError(413, 'request_too_large', `${what} is larger than this gateway accepts (${budget.mb} MB, server.body_limit_mb).`);
}

/** An input item with an id of its own (OpenAI names items msg_, fc_, …; the client may not have). */
function withId(item: Json): Json {
  if (typeof item.id === 'string' && item.id) return item;
  const type = item.type ?? (item.role ? 'message' : 'item');
  const prefix = type === 'message' ? 'msg_' : type === 'function_call' ? 'fc_' : type === 'function_call_output' ? 'fco_' : type === 'reasoning' ? 'rs_' : 'item_';
  const out: Json = { id: localId(prefix), ...item };
  if (!out.type && out.role) out.type = 'message';
  return out;
}

/**
 * The request's input with its stored state resolved. `requestBytes` (the body as received) counts
 * against the budget first; then each referenced item; then the earlier turns.
 */
export async function resolveInput(repo: ResponsesRepo, keyId: string, given: Json[], previousId: string | null, requestBytes: number, budget: Budget): Promise<ResolvedInput> {
  // As OpenAI does, an item appears once per request: one stored item referenced many times would
  // make a few bytes of ids stand for many copies of it.
  const seen = new Set<string>();
  given.forEach((item, i) => {
    const id = item?.type === 'item_reference' ? String(item.id) : typeof item?.id === 'string' && item.id ? item.id : null;
    if (id === null) return;
    if (seen.has(id)) throw new GatewayError(400, 'invalid_request', `input[${i}]: the item '${id}' appears more than once in this request's input; each item may be given or referenced once.`, {}, `input[${i}]`);
    seen.add(id);
  });

  const refs = given.filter((i) => i?.type === 'item_reference').map((i) => String(i.id));
  const sizes = await repo.itemSizes(keyId, refs);
  let used = requestBytes;
  given.forEach((item, i) => {
    if (item?.type !== 'item_reference') return;
    const stored = sizes.get(String(item.id));
    if (!stored) throw notFound('Item', String(item.id), `input[${i}]`);
    used += stored.bytes;
    if (used > budget.bytes) throw tooLarge(budget, 'The input with the items it references');
  });

  let history: Json[] = [];
  let chain: string[] = [];
  let depth = 0;
  if (previousId !== null) {
    const earlier = await historyOf(repo, keyId, previousId, budget.bytes - used, 'previous_response_id');
    if (!earlier) throw notFound('Previous response', previousId, 'previous_response_id');
    if (earlier === 'over') throw tooLarge(budget, 'The input with the conversation before it (previous_response_id)');
    ({ items: history, chain } = earlier);
    depth = earlier.depth + 1;
    used += earlier.bytes;
  }

  const found = await repo.items(keyId, refs);
  const own: Json[] = [];
  const fresh: Json[] = [];
  given.forEach((item, i) => {
    if (item?.type === 'item_reference') {
      const stored = found.get(String(item.id));
      // Deleted or evicted since its size was read.
      if (!stored) throw notFound('Item', String(item.id), `input[${i}]`);
      own.push(stored);
      return;
    }
    const mine = withId(item);
    fresh.push(mine);
    own.push(mine);
  });
  const renew = new Set(chain);
  for (const { responseId } of sizes.values()) renew.add(responseId);
  return { input: [...history, ...own], own, fresh, parentId: previousId, renew: [...renew], depth, bytes: used };
}

/**
 * A stored response's conversation as items (each turn's input, then its output), oldest first,
 * read only if it fits `budget` bytes: 'over' if not, null if the response is not stored. A chain
 * that lost an earlier response (expired, deleted, evicted) is a 404 naming it.
 */
export async function historyOf(
  repo: ResponsesRepo,
  keyId: string,
  id: string,
  budget: number,
  param: string | null,
): Promise<{ items: Json[]; chain: string[]; depth: number; bytes: number } | 'over' | null> {
  const chain = await repo.chain(keyId, id, budget);
  if (!chain) return null;
  if (chain.over) return 'over';
  if (chain.missing) throw lostTurn(id, chain.missing, param);
  const { turns, missing } = await repo.turns(keyId, chain.ids);
  if (missing) throw lostTurn(id, missing, param);
  const items: Json[] = [];
  for (const t of turns) for (const list of [t.inputItems, t.output]) for (const item of list) items.push(item);
  return { items, chain: chain.ids, depth: chain.depth, bytes: chain.bytes };
}
