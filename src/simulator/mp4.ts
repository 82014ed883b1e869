import { idrSlice, pps, sps, CONSTRAINT_FLAGS, LEVEL, PROFILE_BASELINE, type Picture } from './h264.js';

// A small MP4 (ISO BMFF) writer for one H.264 video track: ftyp, moov (fast start), mdat. Enough
// structure for players and ffprobe; nothing more (no edit lists, no audio).

function box(type: string, ...parts: Buffer[]): Buffer {
  const body = Buffer.concat(parts);
  const head = Buffer.alloc(8);
  head.writeUInt32BE(8 + body.length, 0);
  head.write(type, 4, 'latin1');
  return Buffer.concat([head, body]);
}

function fullBox(type: string, version: number, flags: number, ...parts: Buffer[]): Buffer {
  const vf = Buffer.alloc(4);
  vf.writeUInt32BE(((version & 0xff) << 24) | (flags & 0xffffff), 0);
  return box(type, vf, ...parts);
}

function u32(...values: number[]): Buffer {
  const b = Buffer.alloc(4 * values.length);
  values.forEach((v, i) => b.writeUInt32BE(v >>> 0, i * 4));
  return b;
}

function u16(...values: number[]): Buffer {
  const b = Buffer.alloc(2 * values.length);
  values.forEach((v, i) => b.writeUInt16BE(v & 0xffff, i * 2));
  return b;
}

const u8 = (...values: number[]) => Buffer.from(values);

// The identity transformation matrix of mvhd/tkhd (16.16 and 2.30 fixed point).
const MATRIX = u32(0x00010000, 0, 0, 0, 0x00010000, 0, 0, 0, 0x40000000);

export interface Mp4Options {
  width: number;
  height: number;
  fps: number;
  frames: Picture[];
}

export function muxMp4({ width, height, fps, frames }: Mp4Options): Buffer {
  const spsNal = sps(width / 16, height / 16);
  const ppsNal = pps();
  // Each sample: the IDR slice NAL with a 4-byte length prefix (avcC lengthSizeMinusOne = 3).
  const samples = frames.map((pic, i) => {
    const n = idrSlice(pic, i % 2);
    return Buffer.concat([u32(n.length), n]);
  });
  const timescale = fps * 1000;
  const delta = 1000;
  const mediaDuration = frames.length * delta;
  const movieDuration = Math.round((frames.length / fps) * 1000);

  const ftyp = box('ftyp', Buffer.from('isom', 'latin1'), u32(0x200), Buffer.from('isomiso2avc1mp41', 'latin1'));

  const moovFor = (chunkOffset: number) => {
    const mvhd = fullBox('mvhd', 0, 0, u32(0, 0, 1000, movieDuration), u32(0x00010000), u16(0x0100, 0), u32(0, 0), MATRIX, u32(0, 0, 0, 0, 0, 0), u32(2));
    const tkhd = fullBox('tkhd', 0, 3, u32(0, 0, 1, 0, movieDuration, 0, 0), u16(0, 0, 0, 0), MATRIX, u32(width << 16, height << 16));
    const mdhd = fullBox('mdhd', 0, 0, u32(0, 0, timescale, mediaDuration), u16(0x55c4, 0)); // language "und"
    const hdlr = fullBox('hdlr', 0, 0, u32(0), Buffer.from('vide', 'latin1'), u32(0, 0, 0), Buffer.from('VideoHandler\0', 'latin1'));
    const vmhd = fullBox('vmhd', 0, 1, u16(0, 0, 0, 0));
    const dinf = box('dinf', fullBox('dref', 0, 0, u32(1), fullBox('url ', 0, 1)));
    const avcC = box('avcC', u8(1, PROFILE_BASELINE, CONSTRAINT_FLAGS, LEVEL, 0xff, 0xe1), u16(spsNal.length), spsNal, u8(1), u16(ppsNal.length), ppsNal);
    const label = 'mediagate-sim';
    const name = Buffer.alloc(32);
    name.writeUInt8(label.length, 0);
    name.write(label, 1, 'latin1');
    const avc1 = box(
      'avc1',
      Buffer.alloc(6), // reserved
      u16(1), // data_reference_index
      u16(0, 0), // pre_defined, reserved
      u32(0, 0, 0), // pre_defined
      u16(width, height),
      u32(0x00480000, 0x00480000, 0), // 72 dpi, reserved
      u16(1), // frame_count
      name,
      u16(0x0018, 0xffff), // depth, pre_defined = -1
      avcC,
    );
    const stsd = fullBox('stsd', 0, 0, u32(1), avc1);
    const stts = fullBox('stts', 0, 0, u32(1, frames.length, delta));
    const stsc = fullBox('stsc', 0, 0, u32(1, 1, frames.length, 1));
    const stsz = fullBox('stsz', 0, 0, u32(0, frames.length), u32(...samples.map((s) => s.length)));
    const stco = fullBox('stco', 0, 0, u32(1, chunkOffset));
    const stbl = box('stbl', stsd, stts, stsc, stsz, stco); // no stss: every sample is a sync sample
    const minf = box('minf', vmhd, dinf, stbl);
    const mdia = box('mdia', mdhd, hdlr, minf);
    return box('moov', mvhd, box('trak', tkhd, mdia));
  };

  // The moov's size does not depend on the offset value, so measure once and fill in.
  const moovSize = moovFor(0).length;
  const moov = moovFor(ftyp.length + moovSize + 8);
  const mdat = box('mdat', ...samples);
  return Buffer.concat([ftyp, moov, mdat]);
}

/** Color bars that slide one step per frame, as 4:2:0 pictures. */
export function slidingBars(width: number, height: number, count: number): Picture[] {
  // BT.601 YUV of white, yellow, cyan, green, magenta, red, blue, black.
  const bars: [number, number, number][] = [
    [235, 128, 128], [210, 16, 146], [170, 166, 16], [145, 54, 34],
    [106, 202, 222], [81, 90, 240], [41, 240, 110], [16, 128, 128],
  ];
  const pics: Picture[] = [];
  for (let f = 0; f < count; f++) {
    const y = new Uint8Array(width * height);
    const u = new Uint8Array((width / 2) * (height / 2));
    const v = new Uint8Array((width / 2) * (height / 2));
    const barOf = (x: number) => bars[(Math.floor((x * bars.length) / width) + f) % bars.length];
    for (let r = 0; r < height; r++) for (let c = 0; c < width; c++) y[r * width + c] = barOf(c)[0];
    for (let r = 0; r < height / 2; r++) {
      for (let c = 0; c < width / 2; c++) {
        const [, cb, cr] = barOf(c * 2);
        u[r * (width / 2) + c] = cb;
        v[r * (width / 2) + c] = cr;
      }
    }
    pics.push({ width, height, y, u, v });
  }
  return pics;
}

let cached: Buffer | undefined;

/** The simulator's sample clip: 64×64, 12 fps, 1 s of sliding color bars (about 75 KB). */
export function sampleVideo(): Buffer {
  cached ??= muxMp4({ width: 64, height: 64, fps: 12, frames: slidingBars(64, 64, 12) });
  return cached;
}
