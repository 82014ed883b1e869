import type { Config, VideoModeName } from '../config/schema.js';
import { GatewayError, errors } from '../http/errors.js';
import type { ImageModelCaps } from '../providers/image-types.js';
import type { ImageRole, VideoAdapter, VideoGenerationRequest, VideoModelCaps } from '../providers/video-types.js';
import type { CatalogModel } from '../relay/catalog.js';
import { imagesAdapterFor } from '../providers/index.js';
import { targetFor } from '../upstream/target.js';
import { bindModel } from './binding.js';

// What a model accepts, from one source: a create request is checked against it (a value outside
// it is a 400 that names the values allowed, before any credit is held), and GET /v1/models/{id}
// shows it as the model's `capabilities`.

/** The images a request may send per role, in each mode that takes them (the modes of docs/video.md). */
const IMAGES_PER_ROLE: Record<VideoModeName, Partial<Record<ImageRole, number>>> = {
  text: {},
  first_frame: { first_frame: 1 },
  first_last_frame: { first_frame: 1, last_frame: 1 },
  reference_image: { reference_image: 4 },
};

export interface VideoCapabilities extends VideoModelCaps {
  modes: VideoModeName[];
  /** Whether the model renders sound on `generate_audio: true`; absent when no channel can tell. */
  audio?: boolean;
  /** The most images per role, over the modes the model serves. */
  max_images: Partial<Record<ImageRole, number>>;
}

/** The modes and values a video model accepts: its configured modes within what its provider's model serves. */
export function videoCapabilities(configModes: VideoModeName[], adapter: VideoAdapter, upstreamModel: string): VideoCapabilities {
  const caps: VideoModelCaps = adapter.caps(upstreamModel);
  const modes = caps.modes ? configModes.filter((m) => caps.modes!.includes(m)) : configModes;
  const max_images: Partial<Record<ImageRole, number>> = {};
  for (const mode of modes) for (const [role, n] of Object.entries(IMAGES_PER_ROLE[mode]) as [ImageRole, number][]) max_images[role] = Math.max(max_images[role] ?? 0, n);
  // A provider that takes no generate_audio has no model with sound; otherwise the model's own fact decides.
  const taken = adapter.takesParam?.('generate_audio');
  const audio = taken === false ? false : (caps.audio ?? taken);
  const { audio: _model, ...rest } = caps;
  return { ...rest, modes, ...(audio !== undefined ? { audio } : {}), max_images };
}

function listOf(values: readonly (string | number)[]): string {
  const nums = values.every((v) => typeof v === 'number') ? (values as number[]) : null;
  // A run of consecutive whole numbers reads better as a range.
  if (nums && nums.length > 3 && nums.every((n, i) => i === 0 || n === nums[i - 1] + 1)) return `from ${nums[0]} to ${nums[nums.length - 1]}`;
  return `one of ${values.join(', ')}`;
}

function checkValue<T extends string | number>(model: string, field: string, value: T | undefined, allowed: readonly T[] | undefined, unit = ''): void {
  if (value === undefined || !allowed || allowed.includes(value)) return;
  throw errors.invalidRequest(`${field} must be ${listOf(allowed)}${unit} for model "${model}".`, field);
}

export function checkVideoRequest(model: string, configModes: VideoModeName[], adapter: VideoAdapter, upstreamModel: string, req: VideoGenerationRequest): void {
  const caps = videoCapabilities(configModes, adapter, upstreamModel);
  if (!caps.modes.includes(req.mode)) {
    throw new GatewayError(400, 'unsupported_mode', `The model "${model}" does not support ${req.mode} generation; it supports: ${caps.modes.join(', ') || 'none'}.`, {}, 'images');
  }
  const p = req.params;
  checkValue(model, 'duration', p.duration, caps.durations, ' seconds');
  checkValue(model, 'resolution', p.resolution, caps.resolutions);
  checkValue(model, 'ratio', p.ratio, caps.ratios);
  checkValue(model, 'fps', p.fps, caps.fps);
  // (A provider that takes no generate_audio at all refuses it in validate, naming its parameters.)
  if (p.generate_audio === true && caps.audio === false && adapter.takesParam?.('generate_audio') !== false) {
    throw errors.invalidRequest(`generate_audio is not supported by model "${model}": it renders video without sound (GET /v1/models/${model} shows audio: false).`, 'generate_audio');
  }
  adapter.validate?.(upstreamModel, req);
}

/** The client formats a chat model is served in (every one, whatever its channels speak). */
const CHAT_FORMATS = ['openai-chat', 'openai-responses', 'anthropic-messages', 'gemini-generate-content'];

/**
 * A model's `capabilities` as GET /v1/models/{id} shows them: what its first channel's provider
 * model accepts (the one a create is checked against). Absent fields: the provider judges.
 */
export function modelCapabilities(model: CatalogModel, images: Pick<Config['images'], 'max_n'>): Record<string, unknown> {
  switch (model.config.kind) {
    case 'chat':
      return { formats: CHAT_FORMATS };
    case 'video': {
      const b = bindModel(model);
      return b ? { ...videoCapabilities(model.config.modes ?? [], b.adapter, b.target.upstreamModel) } : { modes: model.config.modes ?? [] };
    }
    case 'image': {
      let caps: ImageModelCaps = {};
      for (const channel of model.channels) {
        const found = imagesAdapterFor(targetFor(channel, model.id));
        if (!found) continue;
        caps = found.adapter.caps?.(found.target.upstreamModel) ?? {};
        break;
      }
      // The gateway's own limit on n applies whatever the provider's is.
      return { ...caps, max_n: Math.min(caps.max_n ?? images.max_n, images.max_n) };
    }
  }
}
