import { startGateway, usageRowsOf, type TestGateway } from './gateway.js';
import type { Simulator } from '../../src/simulator/server.js';

/**
 * A gateway whose image models sit behind three wire formats, all answered by one standalone
 * simulator: `sim-image` (simulator channel), `oa-image` (openai channel at sim/v1, mapped to
 * gpt-image-1) and `doubao-seedream-4-0-250828` (ark channel at the sim's origin).
 */
export async function imageGateway(sim: Simulator, extra: Record<string, unknown> = {}): Promise<TestGateway> {
  return startGateway({
    simulator: { embedded: false },
    channels: [
      { name: 'sim', type: 'simulator', base_url: sim.url, models: ['sim-image', 'sim-chat'] },
      { name: 'oa', type: 'openai', base_url: `${sim.url}/v1`, api_key: 'sk-upstream-openai-secret', models: ['oa-image'], model_map: { 'oa-image': 'gpt-image-1' } },
      { name: 'ark', type: 'ark', base_url: sim.url, api_key: 'ark-upstream-secret', models: ['doubao-seedream-4-0-250828'] },
    ],
    models: {
      'sim-image': { kind: 'image', owned_by: 'simulator', price: { per_image: 0.02 } },
      'sim-chat': { kind: 'chat', owned_by: 'simulator' },
      'oa-image': { kind: 'image', owned_by: 'openai', price: { per_image: 0.04 } },
      'doubao-seedream-4-0-250828': { kind: 'image', owned_by: 'volcengine', price: { per_image: 0.03 } },
    },
    ...extra,
  });
}

/** The usage rows of one key, after the ledger has written what it buffered. */
export function usageRows(gw: TestGateway, keyId: string) {
  return usageRowsOf(gw.services, keyId);
}
