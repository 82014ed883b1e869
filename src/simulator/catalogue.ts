import { sendJson, type SimRoute } from './router.js';
import { SIMULATOR_MODELS } from '../providers/simulator/wire.js';

/** GET /v1/models in OpenAI's format: the models the simulator itself offers. */
export function catalogueRoutes(): SimRoute[] {
  return [
    {
      name: 'openai.models',
      method: 'GET',
      pattern: /^\/v1\/models$/,
      auth: true,
      handle(ctx) {
        const created = 1735689600;
        sendJson(ctx.res, 200, {
          object: 'list',
          data: Object.entries(SIMULATOR_MODELS).map(([id, m]) => ({ id, object: 'model', created, owned_by: m.owned_by })),
        });
      },
    },
  ];
}
