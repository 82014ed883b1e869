// A minimal H.264 (Baseline profile) encoder for the simulator's sample video. Every macroblock
// is coded as I_PCM — raw samples, no prediction, no transform — which is the smallest valid
// bitstream a standard decoder (browsers, ffmpeg) plays without any codec library here.

class BitWriter {
  private bytes: number[] = [];
  private cur = 0;
  private n = 0;

  bit(b: number): void {
    this.cur = (this.cur << 1) | (b & 1);
    if (++this.n === 8) {
      this.bytes.push(this.cur);
      this.cur = 0;
      this.n = 0;
    }
  }

  /** u(n): an unsigned value in n bits, most significant first. */
  u(n: number, v: number): void {
    for (let i = n - 1; i >= 0; i--) this.bit((v >>> i) & 1);
  }

  /** ue(v): unsigned Exp-Golomb. */
  ue(v: number): void {
    const x = v + 1;
    const len = 32 - Math.clz32(x);
    this.u(len - 1, 0);
    this.u(len, x);
  }

  /** se(v): signed Exp-Golomb. */
  se(v: number): void {
    this.ue(v <= 0 ? -2 * v : 2 * v - 1);
  }

  get aligned(): boolean {
    return this.n === 0;
  }

  alignZero(): void {
    while (this.n !== 0) this.bit(0);
  }

  /** Raw bytes; only valid when aligned. */
  byte(v: number): void {
    this.bytes.push(v & 0xff);
  }

  /** rbsp_trailing_bits: a one, then zeros to the byte boundary. */
  trailing(): void {
    this.bit(1);
    this.alignZero();
  }

  done(): Buffer {
    return Buffer.from(this.bytes);
  }
}

/** Wraps an RBSP into a NAL unit (header byte + emulation prevention), without a start code. */
function nal(refIdc: number, type: number, rbsp: Buffer): Buffer {
  const out: number[] = [(refIdc << 5) | type];
  let zeros = 0;
  for (const b of rbsp) {
    if (zeros >= 2 && b <= 3) {
      out.push(3);
      zeros = 0;
    }
    out.push(b);
    zeros = b === 0 ? zeros + 1 : 0;
  }
  return Buffer.from(out);
}

export const PROFILE_BASELINE = 66;
export const CONSTRAINT_FLAGS = 0xc0; // constraint_set0 and set1: decodable by any Baseline/Main decoder
export const LEVEL = 30;

export function sps(widthMbs: number, heightMbs: number): Buffer {
  const w = new BitWriter();
  w.u(8, PROFILE_BASELINE);
  w.u(8, CONSTRAINT_FLAGS);
  w.u(8, LEVEL);
  w.ue(0); // seq_parameter_set_id
  w.ue(0); // log2_max_frame_num_minus4
  w.ue(2); // pic_order_cnt_type: output order = decode order
  w.ue(1); // max_num_ref_frames
  w.u(1, 0); // gaps_in_frame_num_value_allowed_flag
  w.ue(widthMbs - 1);
  w.ue(heightMbs - 1);
  w.u(1, 1); // frame_mbs_only_flag
  w.u(1, 1); // direct_8x8_inference_flag
  w.u(1, 0); // frame_cropping_flag
  w.u(1, 0); // vui_parameters_present_flag
  w.trailing();
  return nal(3, 7, w.done());
}

export function pps(): Buffer {
  const w = new BitWriter();
  w.ue(0); // pic_parameter_set_id
  w.ue(0); // seq_parameter_set_id
  w.u(1, 0); // entropy_coding_mode_flag: CAVLC
  w.u(1, 0); // bottom_field_pic_order_in_frame_present_flag
  w.ue(0); // num_slice_groups_minus1
  w.ue(0); // num_ref_idx_l0_default_active_minus1
  w.ue(0); // num_ref_idx_l1_default_active_minus1
  w.u(1, 0); // weighted_pred_flag
  w.u(2, 0); // weighted_bipred_idc
  w.se(0); // pic_init_qp_minus26
  w.se(0); // pic_init_qs_minus26
  w.se(0); // chroma_qp_index_offset
  w.u(1, 1); // deblocking_filter_control_present_flag
  w.u(1, 0); // constrained_intra_pred_flag
  w.u(1, 0); // redundant_pic_cnt_present_flag
  w.trailing();
  return nal(3, 8, w.done());
}

/** A 4:2:0 picture: Y is width×height, U and V are (width/2)×(height/2). */
export interface Picture {
  width: number;
  height: number;
  y: Uint8Array;
  u: Uint8Array;
  v: Uint8Array;
}

// PCM samples avoid 0 so no run of zero bytes can form inside the macroblock data.
const clampPcm = (x: number) => Math.min(255, Math.max(1, x));

/** One IDR access unit (a single slice) holding the picture as I_PCM macroblocks. */
export function idrSlice(pic: Picture, idrPicId: number): Buffer {
  const w = new BitWriter();
  w.ue(0); // first_mb_in_slice
  w.ue(7); // slice_type: I (all slices of the picture)
  w.ue(0); // pic_parameter_set_id
  w.u(4, 0); // frame_num (log2_max_frame_num = 4)
  w.ue(idrPicId);
  w.u(1, 0); // no_output_of_prior_pics_flag
  w.u(1, 0); // long_term_reference_flag
  w.se(0); // slice_qp_delta
  w.ue(1); // disable_deblocking_filter_idc: off
  const mbsW = pic.width / 16;
  const mbsH = pic.height / 16;
  const cw = pic.width / 2;
  for (let my = 0; my < mbsH; my++) {
    for (let mx = 0; mx < mbsW; mx++) {
      w.ue(25); // mb_type: I_PCM
      w.alignZero(); // pcm_alignment_zero_bit
      for (let y = 0; y < 16; y++) for (let x = 0; x < 16; x++) w.byte(clampPcm(pic.y[(my * 16 + y) * pic.width + mx * 16 + x]));
      for (const plane of [pic.u, pic.v]) for (let y = 0; y < 8; y++) for (let x = 0; x < 8; x++) w.byte(clampPcm(plane[(my * 8 + y) * cw + mx * 8 + x]));
    }
  }
  w.trailing();
  return nal(3, 5, w.done());
}
