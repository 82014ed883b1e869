import type { Provider } from '../provider.js';
import { needsSecret } from './hooks/auth.js';
import type { Manifest } from './manifest.js';
import { offeredModels } from './models.js';
import { imageAdapter } from './image-adapter.js';
import { videoAdapter } from './video-adapter.js';
import { kitBalance, kitProbe } from './account.js';

/** The Provider a manifest describes: its channel type, defaults, simulator part, video and image adapters. */
export function kitProvider(m: Manifest): Provider {
  const d = m.defaults ?? {};
  const claims = m.simulator?.claims;
  const videos = m.videos ? videoAdapter(m) : undefined;
  const balance = kitBalance(m);
  const probe = kitProbe(m, videos);
  return {
    type: m.type,
    ...(videos ? { videos } : {}),
    ...(balance ? { balance } : {}),
    ...(probe ? { probe } : {}),
    ...(m.images ? { images: imageAdapter(m) } : {}),
    needsBaseUrl: m.needs_base_url ?? true,
    ...(needsSecret(m.api.auth) ? { needsApiSecret: true } : {}),
    ...(m.api.settings ? { settings: m.api.settings } : {}),
    defaults: {
      ...(d.base_url ? { baseUrl: d.base_url } : {}),
      ...(d.env ? { env: { apiKey: d.env.api_key, ...(d.env.api_secret ? { apiSecret: d.env.api_secret } : {}) } } : {}),
      models: offeredModels(m),
      ownedBy: m.owned_by,
      ...(d.simulated ? { simulated: true } : {}),
    },
    ...(m.simulator && claims
      ? { simulator: { path: m.simulator.path, claims: { ...(claims.videos ? { videos: new RegExp(claims.videos) } : {}), ...(claims.images ? { images: new RegExp(claims.images) } : {}) } } }
      : {}),
  };
}
