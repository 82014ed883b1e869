import type { ChannelConfig, Config, ModelConfig } from '../config/schema.js';
import type { Principal } from '../auth/principal.js';
import { mayUseModel } from '../auth/principal.js';

export interface CatalogModel {
  id: string;
  config: ModelConfig;
  created: number;
  ownedBy: string;
  endpointTypes: string[];
  /** Enabled channels serving this model, best first (lower priority value first). */
  channels: ChannelConfig[];
}

const ENDPOINT_TYPES: Record<ModelConfig['kind'], string[]> = {
  // The gateway converts between both chat formats for every chat model.
  chat: ['openai', 'anthropic'],
  image: ['image-generation'],
  video: ['openai-video'],
};

/** The models of the config joined with the channels that serve them. Built once at start. */
export class Catalog {
  private readonly byId = new Map<string, CatalogModel>();
  private readonly sorted: CatalogModel[];

  constructor(config: Config, firstSeen: ReadonlyMap<string, number>) {
    for (const [id, model] of Object.entries(config.models)) {
      const channels = config.channels.filter((c) => c.enabled && c.models.includes(id)).sort((a, b) => a.priority - b.priority);
      if (!channels.length) continue;
      this.byId.set(id, {
        id,
        config: model,
        created: model.created ?? firstSeen.get(id) ?? Math.floor(Date.now() / 1000),
        ownedBy: model.owned_by ?? 'mediagate',
        endpointTypes: model.endpoint_types ?? ENDPOINT_TYPES[model.kind],
        channels,
      });
    }
    this.sorted = [...this.byId.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  get(id: string): CatalogModel | undefined {
    return this.byId.get(id);
  }

  /** Models the principal may call, sorted by id. */
  listFor(p: Principal): CatalogModel[] {
    return p.models === null ? this.sorted : this.sorted.filter((m) => mayUseModel(p, m.id));
  }

  all(): CatalogModel[] {
    return this.sorted;
  }
}
