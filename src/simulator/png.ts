import { deflateSync } from 'node:zlib';

// A minimal PNG encoder (8-bit RGB or RGBA, no interlace, filter 0 on every row) so the simulator can
// answer with real images without an image library. Chunk = length, type, data, CRC-32(type+data).

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

export function crc32(...parts: Buffer[]): number {
  let c = 0xffffffff;
  for (const buf of parts) for (let i = 0; i < buf.length; i++) c = CRC_TABLE[(c ^ buf[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(head.subarray(4), data), 0);
  return Buffer.concat([head, data, crc]);
}

/** Encodes `pixels` (width × height × channels bytes, row by row; 3 = RGB, 4 = RGBA) as a PNG file. */
export function encodePng(width: number, height: number, pixels: Uint8Array, channels: 3 | 4 = 3): Buffer {
  if (pixels.length !== width * height * channels) throw new Error('encodePng: pixel buffer does not match the size');
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = channels === 4 ? 6 : 2; // colour type: truecolour with / without alpha
  // compression, filter and interlace methods stay 0
  const stride = width * channels;
  const raw = Buffer.alloc(height * (stride + 1));
  for (let y = 0; y < height; y++) {
    raw[y * (stride + 1)] = 0; // filter: none
    raw.set(pixels.subarray(y * stride, (y + 1) * stride), y * (stride + 1) + 1);
  }
  return Buffer.concat([SIGNATURE, chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw, { level: 6 })), chunk('IEND', Buffer.alloc(0))]);
}

/** FNV-1a over a string: a stable 32-bit seed for the picture drawn from a prompt. */
export function seedOf(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/**
 * A deterministic picture for a seed: a diagonal two-colour gradient with soft stripes, so
 * different prompts give visibly different images and the same prompt gives the same one.
 */
export function patternImage(width: number, height: number, seed: number): Buffer {
  const a = [seed & 0xff, (seed >>> 8) & 0xff, (seed >>> 16) & 0xff];
  const b = [255 - a[1], 255 - a[2], 255 - a[0]];
  const period = 8 + ((seed >>> 24) % 24);
  const rgb = new Uint8Array(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const t = (x / Math.max(1, width - 1) + y / Math.max(1, height - 1)) / 2;
      const stripe = ((x + y) % period) < period / 2 ? 0 : 24;
      const i = (y * width + x) * 3;
      for (let c = 0; c < 3; c++) rgb[i + c] = Math.min(255, Math.round(a[c] * (1 - t) + b[c] * t) + stripe);
    }
  }
  return encodePng(width, height, rgb);
}
