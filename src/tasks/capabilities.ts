import type { VideoModeName } from '../config/schema.js';
import { GatewayError, errors } from '../http/errors.js';
import type { VideoAdapter, VideoGenerationRequest, VideoModelCaps } from '../providers/video-types.js';

// A create request checked against what the model accepts: its configured modes, and the values
// its provider adapter declares for the upstream model. A value outside them is a 400 that names
// the values allowed, before any credit is held.

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
  const caps: VideoModelCaps = adapter.caps(upstreamModel);
  const modes = caps.modes ? configModes.filter((m) => caps.modes!.includes(m)) : configModes;
  if (!modes.includes(req.mode)) {
    throw new GatewayError(400, 'unsupported_mode', `The model "${model}" does not support ${req.mode} generation; it supports: ${modes.join(', ') || 'none'}.`, {}, 'images');
  }
  const p = req.params;
  checkValue(model, 'duration', p.duration, caps.durations, ' seconds');
  checkValue(model, 'resolution', p.resolution, caps.resolutions);
  checkValue(model, 'ratio', p.ratio, caps.ratios);
  checkValue(model, 'fps', p.fps, caps.fps);
  adapter.validate?.(upstreamModel, req);
}
