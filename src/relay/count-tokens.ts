import type { AbortLike } from '../upstream/abort-like.js';
import type { UpstreamClient } from '../upstream/client.js';
import { UpstreamFailure } from '../upstream/failure.js';
import { readJsonBody } from '../upstream/json.js';
import { usageCount } from '../upstream/usage-number.js';
import { chatEndpointFor } from '../providers/index.js';
import { GatewayError } from '../http/errors.js';
import type { CatalogModel } from './catalog.js';
import { CLIENT_CLOSED } from './metered.js';
import type { Relay } from './relay.js';

// The input tokens of an Anthropic Messages request (POST /v1/messages/count_tokens), on the
// channel the request would be relayed to: exact where that channel counts them itself (an
// Anthropic channel's own /v1/messages/count_tokens), else `bound`, the upper bound the credit hold
// of the same request reserves. Channels are tried like any call (order, retries, breakers).

export interface TokenCount {
  inputTokens: number;
  /** The channel that answered. */
  channel: string;
  /** Counted by the upstream (true), or the gateway's bound (false). */
  exact: boolean;
}

/** A client that left while its count ran is a 499 (nobody to answer). */
export async function countInputTokens(d: { relay: Relay; upstream: UpstreamClient }, model: CatalogModel, body: Record<string, unknown>, bound: number, signal: AbortLike): Promise<TokenCount> {
  try {
    return await runCount(d, model, body, bound, signal);
  } catch (err) {
    if (err instanceof UpstreamFailure && err.kind === 'aborted') throw new GatewayError(CLIENT_CLOSED, 'client_closed_request', 'The client closed the request before the count was ready.');
    throw err;
  }
}

function runCount(d: { relay: Relay; upstream: UpstreamClient }, model: CatalogModel, body: Record<string, unknown>, bound: number, signal: AbortLike): Promise<TokenCount> {
  return d.relay.run(model, async (target) => {
    const found = chatEndpointFor(target, 'anthropic');
    if (!found) throw new UpstreamFailure('status', `channel type "${target.channel.type}" has no chat`, 501);
    const { endpoint, target: to } = found;
    if (!endpoint.countUrl) return { inputTokens: bound, channel: target.channel.name, exact: false };
    const res = await d.upstream.send({ url: endpoint.countUrl(to), method: 'POST', headers: endpoint.headers(to, false), body: JSON.stringify({ ...body, model: to.upstreamModel }), signal });
    if (res.statusCode < 200 || res.statusCode >= 300) throw await endpoint.failure(res);
    const answer = (await readJsonBody(res, signal)) as { input_tokens?: unknown } | null;
    const tokens = usageCount(answer?.input_tokens);
    if (tokens === null) throw new UpstreamFailure('malformed', 'the upstream token count has no believable input_tokens', res.statusCode);
    return { inputTokens: tokens, channel: target.channel.name, exact: true };
  });
}
