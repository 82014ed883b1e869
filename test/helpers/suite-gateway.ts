import { afterAll, beforeAll } from 'vitest';
import { startGateway, type GatewayOptions, type TestGateway } from './gateway.js';

/** The gateway and one unlimited key of a describe block, started before its tests and closed after. */
export interface SuiteGateway {
  gw: TestGateway;
  key: string;
}

/** Registers the hooks of a describe block that shares one gateway and one key; read the fields inside tests. */
export function suiteGateway(overrides: () => Record<string, unknown> = () => ({}), opts: GatewayOptions = {}): SuiteGateway {
  const suite = {} as SuiteGateway;
  beforeAll(async () => {
    suite.gw = await startGateway(overrides(), opts);
    suite.key = (await suite.gw.createKey()).key;
  });
  afterAll(async () => suite.gw?.close());
  return suite;
}
