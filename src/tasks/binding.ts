import type { ChannelConfig } from '../config/schema.js';
import type { CatalogModel } from '../relay/catalog.js';
import { videoAdapterFor } from '../providers/index.js';
import type { VideoAdapter } from '../providers/video-types.js';
import { allowsPrivateNetwork } from '../upstream/address-guard.js';
import { targetFor, type Target } from '../upstream/target.js';

// The one place that turns a channel (a stored task's, or a model's) into the video adapter that
// speaks to it and the target to address.

export interface VideoBinding {
  channel: ChannelConfig;
  adapter: VideoAdapter;
  target: Target;
}

export function bindChannel(channel: ChannelConfig, model: string): VideoBinding | undefined {
  const found = videoAdapterFor(targetFor(channel, model));
  return found && { channel, adapter: found.adapter, target: found.target };
}

/**
 * The channel a stored task was created on, as configured now: enabled or not (a channel disabled
 * after the task was created takes no new work, but its tasks are still polled, read, downloaded
 * and judged as its own); undefined once it was removed from the configuration.
 */
export function channelOfTask(channels: readonly ChannelConfig[], row: { channel: string }): ChannelConfig | undefined {
  return channels.find((c) => c.name === row.channel);
}

/**
 * The one private-network verdict for a stored task: whether the URLs its provider hands the
 * gateway (result links, their fetches, downloads and redirects) may point at private, loopback or
 * link-local addresses. That of its channel (channelOfTask); false when the channel is gone.
 */
export function taskAllowsPrivateNetwork(channels: readonly ChannelConfig[], row: { channel: string }): boolean {
  const channel = channelOfTask(channels, row);
  return channel ? allowsPrivateNetwork(channel) : false;
}

/** A stored task's channel, adapter and target; undefined when its channel is gone or runs no video. */
export function bindTask(channels: readonly ChannelConfig[], row: { channel: string; model: string }): VideoBinding | undefined {
  const channel = channelOfTask(channels, row);
  return channel && bindChannel(channel, row.model);
}

/**
 * The adapter that judges a create request before credit is held: that of the model's first
 * channel that runs video tasks (channels of one model serve the same provider's model).
 */
export function bindModel(model: CatalogModel): VideoBinding | undefined {
  for (const channel of model.channels) {
    const b = bindChannel(channel, model.id);
    if (b) return b;
  }
  return undefined;
}
