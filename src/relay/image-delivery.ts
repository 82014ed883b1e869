import type { ImageDatum, ImagesResult } from '../providers/image-types.js';
import { getFollowingRedirects } from '../providers/video-support.js';
import { sniffImageType, MIME } from '../http/image-type.js';
import { UpstreamFailure } from '../upstream/failure.js';
import type { UpstreamClient } from '../upstream/client.js';
import type { Target } from '../upstream/target.js';
import type { ImageFiles } from './image-files.js';

// response_format on every provider, whatever it answers: a provider URL is downloaded (through the
// address guard, as every result URL) when the client wants b64_json; base64 or bytes are stored
// and served from a gateway URL with an expiry when it wants url. Without response_format each
// image goes out as the provider gave it.

const MAX_IMAGE_BYTES = 50 * 1024 * 1024;

export interface DeliveryContext {
  target: Target;
  upstream: UpstreamClient;
  files: ImageFiles;
  /** The gateway's own origin for this request (server.public_url, else what the client called). */
  base: string;
  signal?: AbortSignal;
}

/** The bytes behind a provider's image URL. */
async function download(url: string, ctx: DeliveryContext): Promise<Buffer> {
  const res = await getFollowingRedirects({ upstream: ctx.upstream, signal: ctx.signal }, ctx.target, url, () => ({}));
  if (res.statusCode < 200 || res.statusCode >= 300) {
    res.body.on('error', () => undefined);
    res.body.destroy();
    throw new UpstreamFailure('status', `the provider's image URL answered ${res.statusCode}`, 502);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of res.body) {
    size += (c as Buffer).length;
    if (size > MAX_IMAGE_BYTES) {
      res.body.destroy();
      throw new UpstreamFailure('oversized', `the provider's image is larger than ${MAX_IMAGE_BYTES} bytes`, 200);
    }
    chunks.push(c as Buffer);
  }
  const bytes = Buffer.concat(chunks);
  if (!sniffImageType(bytes)) throw new UpstreamFailure('malformed', "the provider's image URL did not serve a PNG, JPEG or WEBP image", 200);
  return bytes;
}

export function imageFileUrl(base: string, name: string): string {
  return `${base}/v1/images/files/${name}`;
}

/** The images in the form the client asked for; `mime` is dropped. */
export async function deliverImages(result: ImagesResult, format: 'url' | 'b64_json' | undefined, ctx: DeliveryContext): Promise<ImageDatum[]> {
  return Promise.all(
    result.data.map(async ({ mime, ...d }): Promise<ImageDatum> => {
      if (format === 'b64_json' && d.b64_json === undefined && d.url !== undefined) {
        const { url: _, ...rest } = d;
        return { ...rest, b64_json: (await download(d.url, ctx)).toString('base64') };
      }
      if (format === 'url' && d.url === undefined && d.b64_json !== undefined) {
        const bytes = Buffer.from(d.b64_json, 'base64');
        const type = sniffImageType(bytes);
        if (!type) throw new UpstreamFailure('malformed', 'the provider returned image data that is not a PNG, JPEG or WEBP image', 200);
        const { b64_json: _, ...rest } = d;
        const stored = await ctx.files.put(bytes, mime && mime === MIME[type] ? mime : MIME[type]);
        return { ...rest, url: imageFileUrl(ctx.base, stored.name) };
      }
      return d;
    }),
  );
}
