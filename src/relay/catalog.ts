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
  // Every chat model answers in every client format, whatever its channels speak.
  chat: ['openai', 'anthropic', 'openai-response', 'gemini'],
  image: ['image-generation'],
  video: ['openai-video'],
};

interface CatalogView {
  byId: Map<string, CatalogModel>;
  sorted: CatalogModel[];
}

/**
 * The models of the config joined with the channels that serve them. Built at start and rebuilt
 * by a config reload: replace() swaps the whole view in one assignment, so a request sees either
 * the old catalog or the new one, and a request already holding a CatalogModel keeps its channels.
 */
export class Catalog {
  private view: CatalogView;

  constructor(config: Config, firstSeen: ReadonlyMap<string, number>) {
    this.view = Catalog.build(config, firstSeen);
  }

  /** Rebuilds the catalog from a (reloaded) config. */
  replace(config: Config, firstSeen: ReadonlyMap<string, number>): void {
    this.view = Catalog.build(config, firstSeen);
  }

  private static build(config: Config, firstSeen: ReadonlyMap<string, number>): CatalogView {
    const byId = new Map<string, CatalogModel>();
    for (const [id, model] of Object.entries(config.models)) {
      const channels = config.channels.filter((c) => c.enabled && c.models.includes(id)).sort((a, b) => a.priority - b.priority);
      if (!channels.length) continue;
      byId.set(id, {
        id,
        config: model,
        created: model.created ?? firstSeen.get(id) ?? Math.floor(Date.now() / 1000),
        ownedBy: model.owned_by ?? 'mediagate',
        endpointTypes: model.endpoint_types ?? ENDPOINT_TYPES[model.kind],
        channels,
      });
    }
    const sorted = [...byId.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return { byId, sorted };
  }

  get(id: string): CatalogModel | undefined {
    return this.view.byId.get(id);
  }

  /** Models the principal may call, sorted by id. */
  listFor(p: Principal): CatalogModel[] {
    const { sorted } = this.view;
    return p.models === null ? sorted : sorted.filter((m) => mayUseModel(p, m.id));
  }

  all(): CatalogModel[] {
    return this.view.sorted;
  }
}
