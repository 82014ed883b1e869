import { inflateSync } from 'node:zlib';
import { expect } from 'vitest';
import { crc32, encodePng } from '../../src/simulator/png.js';

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const CHANNELS: Record<number, number> = { 0: 1, 2: 3, 4: 2, 6: 4 };

/**
 * Decodes a PNG far enough to prove it is one: the signature, every chunk's CRC, IHDR, and IDAT
 * inflating to exactly height × (1 + width × bytes per pixel) bytes. Asserts the expected size.
 */
export function expectPng(buf: Buffer, width: number, height: number): void {
  expect(buf.subarray(0, 8).equals(SIGNATURE)).toBe(true);
  let pos = 8;
  let ihdr: Buffer | null = null;
  const idat: Buffer[] = [];
  let ended = false;
  while (pos < buf.length) {
    const len = buf.readUInt32BE(pos);
    const type = buf.subarray(pos + 4, pos + 8);
    const data = buf.subarray(pos + 8, pos + 8 + len);
    expect(buf.readUInt32BE(pos + 8 + len)).toBe(crc32(type, data));
    const name = type.toString('latin1');
    if (name === 'IHDR') ihdr = Buffer.from(data);
    if (name === 'IDAT') idat.push(data);
    if (name === 'IEND') ended = true;
    pos += 12 + len;
  }
  expect(ended).toBe(true);
  expect(ihdr).not.toBeNull();
  expect(ihdr!.readUInt32BE(0)).toBe(width);
  expect(ihdr!.readUInt32BE(4)).toBe(height);
  expect(ihdr![8]).toBe(8);
  const channels = CHANNELS[ihdr![9]];
  expect(channels).toBeDefined();
  const raw = inflateSync(Buffer.concat(idat));
  expect(raw.length).toBe(height * (1 + width * channels));
}

/** A W×H RGB gradient, a real PNG file. */
export function photo(w: number, h: number): Buffer {
  const px = new Uint8Array(w * h * 3);
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) px.set([(x * 255) / w, (y * 255) / h, 128], (y * w + x) * 3);
  return encodePng(w, h, px);
}

/** An RGBA mask: the left half fully transparent (to be edited), the right half opaque. */
export function mask(w: number, h: number): Buffer {
  const px = new Uint8Array(w * h * 4);
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) px.set([0, 0, 0, x < w / 2 ? 0 : 255], (y * w + x) * 4);
  return encodePng(w, h, px, 4);
}

/**
 * A valid 1×1 PNG whose header claims `w`×`h` (its IHDR rewritten, CRC included): a few dozen bytes
 * that a reader trusting the header would take for a huge picture.
 */
export function claimingPng(w: number, h: number): Buffer {
  const png = Buffer.from(encodePng(1, 1, new Uint8Array(3).fill(200)));
  png.writeUInt32BE(w, 16);
  png.writeUInt32BE(h, 20);
  png.writeUInt32BE(crc32(png.subarray(12, 29)), 29);
  return png;
}
