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
  /** The `GET /v1/models` answer for every model (built on first need). */
  listAll?: Buffer;
  /** The answer per allow-list (a key's set of model ids; a changed key brings a new set). */
  lists: WeakMap<ReadonlySet<string>, Buffer>;
}

/** One entry of `GET /v1/models`, in the field order of the OpenAI API. */
export function modelEntry(m: CatalogModel) {
  return { id: m.id, object: 'model' as const, created: m.created, owned_by: m.ownedBy, supported_endpoint_types: m.endpointTypes };
}

/**
 * The models of the config joined with the channels that serve them. Built at start and rebuilt
 * by a config reload: replace() swaps the whole view in one assignment, so a request sees either
 * the old catalog or the new one, and a request already holding a CatalogModel keeps its channels.
 */
export class Catalog {
  private view: CatalogView;

  constructor(
    config: Config,
    private firstSeen: ReadonlyMap<string, number>,
  ) {
    this.view = Catalog.build(config, firstSeen);
  }

  /** Rebuilds the catalog from a (reloaded) config. */
  replace(config: Config, firstSeen: ReadonlyMap<string, number>): void {
    this.firstSeen = firstSeen;
    this.view = Catalog.build(config, firstSeen);
  }

  /** Rebuilds the catalog after the channels changed (the models did not). */
  rechannel(config: Config): void {
    this.view = Catalog.build(config, this.firstSeen);
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
    return { byId, sorted, lists: new WeakMap() };
  }

  get(id: string): CatalogModel | undefined {
    return this.view.byId.get(id);
  }

  /** Models the principal may call, sorted by id. */
  listFor(p: Principal): CatalogModel[] {
    const { sorted } = this.view;
    return p.models === null ? sorted : sorted.filter((m) => mayUseModel(p, m.id));
  }

  /**
   * The `GET /v1/models` answer for the principal, as bytes prepared once per allow-list and
   * catalog: a reload builds a new catalog view (and so new answers); a key whose allow-list
   * changed comes back from the authenticator with a new set (and so a new answer).
   */
  listBytesFor(p: Principal): Buffer {
    const view = this.view;
    if (p.models === null) return (view.listAll ??= listBytes(view.sorted));
    let bytes = view.lists.get(p.models);
    if (!bytes) {
      bytes = listBytes(this.listFor(p));
      view.lists.set(p.models, bytes);
    }
    return bytes;
  }

  all(): CatalogModel[] {
    return this.view.sorted;
  }
}

function listBytes(models: CatalogModel[]): Buffer {
  return Buffer.from(JSON.stringify({ object: 'list', success: true, data: models.map(modelEntry) }));
}
