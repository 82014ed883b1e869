import { startSimulator, type Simulator } from '../../src/simulator/server.js';
import { startGateway, usageRowsOf, type TestGateway } from './gateway.js';
import { eventually as poll } from './eventually.js';

/** Chat models of the chat tests: one per native channel format, all served by one simulator. */
export const CHAT_TEST_MODELS = {
  'gpt-sim': { kind: 'chat', owned_by: 'openai', price: { input_per_million: 1, output_per_million: 2 } },
  'claude-sim': { kind: 'chat', owned_by: 'anthropic', price: { input_per_million: 3, output_per_million: 15 } },
  'sim-chat': { kind: 'chat', owned_by: 'simulator', price: { input_per_million: 0.5, output_per_million: 1.5 } },
  'sim-image': { kind: 'image', owned_by: 'simulator', price: { per_image: 0.02 } },
} as const;

export interface ChatRig {
  gw: TestGateway;
  sim: Simulator;
  key: string;
  keyId: string;
  close(): Promise<void>;
  /** The simulator's request counters (GET /__sim/stats). */
  stats(): Promise<{ counts: Record<string, number>; disconnects: Record<string, number>; open: number }>;
  fault(f: Record<string, unknown>): Promise<void>;
}

/**
 * A gateway whose channels point at a standalone simulator: an `openai` channel (base_url
 * `${sim}/v1`) for gpt-sim, an `anthropic` channel (base_url `${sim}`) for claude-sim, and a
 * `simulator` channel for sim-chat. `channels` replaces them for routing tests; `config`: more
 * sections of the gateway's config.
 */
export async function startChatRig(
  opts: { channels?: (simUrl: string) => unknown[]; relay?: Record<string, unknown>; models?: Record<string, unknown>; creditMicros?: number | null; config?: Record<string, unknown> } = {},
): Promise<ChatRig> {
  const sim = await startSimulator({ port: 0 });
  const channels = opts.channels
    ? opts.channels(sim.url)
    : [
        { name: 'oai', type: 'openai', base_url: `${sim.url}/v1`, api_key: 'sk-test-openai-upstream', models: ['gpt-sim'] },
        { name: 'anth', type: 'anthropic', base_url: sim.url, api_key: 'sk-ant-test-upstream', models: ['claude-sim'] },
        { name: 'simch', type: 'simulator', base_url: sim.url, api_key: 'sim-key', models: ['sim-chat', 'sim-image'] },
      ];
  let gw: TestGateway;
  try {
    gw = await startGateway({ simulator: { embedded: false }, channels, models: opts.models ?? CHAT_TEST_MODELS, ...(opts.relay ? { relay: opts.relay } : {}), ...opts.config });
  } catch (err) {
    await sim.close();
    throw err;
  }
  const { id, key } = await gw.createKey({ creditMicros: opts.creditMicros ?? null });
  return {
    gw,
    sim,
    key,
    keyId: id,
    async close() {
      await gw.close();
      await sim.close();
    },
    async stats() {
      return (await (await fetch(`${sim.url}/__sim/stats`)).json()) as any;
    },
    async fault(f) {
      const res = await fetch(`${sim.url}/__sim/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(f) });
      if (res.status !== 200) throw new Error(`fault not accepted: ${await res.text()}`);
    },
  };
}

/** Polls `check` until it returns true or the deadline passes (no fixed sleeps in tests). */
export async function eventually(check: () => Promise<boolean> | boolean, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  await poll(check, timeoutMs, what);
}

/** The usage ledger rows of the rig's key, after flushing the ledger's buffer. */
export function ledgerRows(rig: ChatRig, keyId = rig.keyId) {
  return usageRowsOf(rig.gw.services, keyId);
}

/**
 * The ledger rows once there are `n` of them: a stream's row is written just after its last event
 * went out (settling does not hold the client's stream open), so a test polls for it.
 */
export async function ledgerRowsWhen(rig: ChatRig, n: number, keyId = rig.keyId) {
  await eventually(async () => (await ledgerRows(rig, keyId)).length >= n, 10_000, `${n} ledger rows`);
  return ledgerRows(rig, keyId);
}

/** POSTs JSON to the gateway with the rig's key. */
export function post(rig: ChatRig, path: string, body: unknown, key = rig.key, signal?: AbortSignal): Promise<Response> {
  return fetch(`${rig.gw.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body), signal });
}

/** Waits until the simulator is answering nothing: no upstream request left open. */
export async function noOpenUpstream(rig: ChatRig): Promise<void> {
  await eventually(async () => (await rig.stats()).open === 0, 10_000, 'the simulator to have no open request');
}
