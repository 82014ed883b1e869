import { errors } from '../http/errors.js';
import type { EditInput, ImageParams, ImagesAdapter, ImagesCall, ImagesResult } from '../providers/image-types.js';
import { imagesAdapterFor } from '../providers/index.js';
import type { UpstreamClient } from '../upstream/client.js';
import { targetFor, type Target } from '../upstream/target.js';
import type { CatalogModel } from './catalog.js';

/** One images attempt on one channel: the adapter of the provider that serves it, generating or editing. */
export class ImagesRelay {
  constructor(private readonly upstream: UpstreamClient) {}

  generate(target: Target, params: ImageParams, signal: AbortSignal, wait?: ImagesCall['wait']): Promise<ImagesResult> {
    return this.on(target, (adapter, t) => adapter.generate({ upstream: this.upstream, signal, wait, traceparent: target.traceparent, tracestate: target.tracestate }, t, params));
  }

  edit(target: Target, input: EditInput, signal: AbortSignal, wait?: ImagesCall['wait']): Promise<ImagesResult> {
    return this.on(target, (adapter, t) => adapter.edit({ upstream: this.upstream, signal, wait, traceparent: target.traceparent, tracestate: target.tracestate }, t, input));
  }

  /** Whether a channel of the model answers with tasks (so a request may outlive its wait). */
  queued(model: CatalogModel): boolean {
    return model.channels.some((c) => !!imagesAdapterFor(targetFor(c, model.id))?.adapter.queued);
  }

  private on(target: Target, op: (adapter: ImagesAdapter, target: Target) => Promise<ImagesResult>): Promise<ImagesResult> {
    const found = imagesAdapterFor(target);
    if (!found) throw errors.upstreamError(`The channel "${target.channel.name}" (${target.channel.type}) cannot serve images; fix the gateway's configuration.`);
    return op(found.adapter, found.target);
  }
}
