import { BitWriter } from './bits.ts';

/**
 * The smallest H.264 stream that is still a real one: Constrained Baseline, 4:2:0, CAVLC, one IDR picture of flat
 * mid-grey macroblocks, then P pictures that skip every macroblock (each repeats the picture before it). Any
 * decoder plays it; no encoder is needed because nothing in the picture varies.
 * @see ITU-T H.264 (08/2021) §7.3 syntax, §8.3.3 Intra_16x16 prediction, Table 7-11 macroblock types
 */
export interface AvcStream {
  /** The parameter sets, without start codes (avcC carries them). */
  sps: Buffer;
  pps: Buffer;
  profile: number;
  compatibility: number;
  level: number;
  /** The IDR picture's NAL unit. */
  idr: Buffer;
  /** The NAL unit of the P picture with this frame_num (0 … MAX_FRAME_NUM - 1). */
  skip(frameNum: number): Buffer;
}

/** log2_max_frame_num_minus4 = 0: frame_num counts modulo 16. */
export const MAX_FRAME_NUM = 16;
const MAX_FRAME_NUM_LOG2 = 4;
/** Constrained Baseline: profile_idc 66 with constraint_set0 and constraint_set1 (Annex A.2.1.1). */
const PROFILE_BASELINE = 66;
const CONSTRAINED = 0b1100_0000;
/** Frames per second the level is chosen for (the MP4 muxer's highest rate). */
const LEVEL_FPS = 25;

/**
 * Levels by frame size and macroblock rate (Table A-1: MaxFS, MaxMBPS); a side may be at most √(8·MaxFS)
 * macroblocks (A.3.1 f, g).
 */
const LEVELS: readonly [idc: number, maxFs: number, maxMbps: number][] = [
  [10, 99, 1485], [11, 396, 3000], [12, 396, 6000], [13, 396, 11880], [20, 396, 11880], [21, 792, 19800],
  [22, 1620, 20250], [30, 1620, 40500], [31, 3600, 108000], [32, 5120, 216000], [40, 8192, 245760],
  [42, 8704, 522240], [50, 22080, 589824], [51, 36864, 983040], [52, 36864, 2073600], [60, 139264, 4177920],
];

/** NAL unit types and header bytes (§7.3.1: forbidden_zero_bit, nal_ref_idc, nal_unit_type). */
const NAL_IDR = 0x65; // nal_ref_idc 3, type 5
const NAL_SPS = 0x67; // nal_ref_idc 3, type 7
const NAL_PPS = 0x68; // nal_ref_idc 3, type 8
const NAL_P = 0x41; // nal_ref_idc 2, type 1: a reference picture, so frame_num simply counts up

/**
 * One Intra_16x16 macroblock that predicts mid-grey and codes no residual, as its 8 bits:
 * mb_type ue(3) = I_16x16_2_0_0 (DC prediction, no coded luma or chroma) `00100`, intra_chroma_pred_mode ue(0) `1`
 * (DC), mb_qp_delta se(0) `1`, and the Intra16x16DCLevel block's coeff_token for no coefficients (nC 0) `1`.
 * With no neighbour, or neighbours that are all 128, DC prediction gives 1 << (BitDepth - 1) = 128 (§8.3.3.3).
 */
const GREY_MACROBLOCK = 0b0010_0111;

export function avcStream(width: number, height: number): AvcStream {
  const mbWidth = Math.ceil(width / 16);
  const mbHeight = Math.ceil(height / 16);
  const macroblocks = mbWidth * mbHeight;
  const level = levelFor(mbWidth, mbHeight);

  const sps = new BitWriter()
    .bits(NAL_SPS, 8)
    .bits(PROFILE_BASELINE, 8)
    .bits(CONSTRAINED, 8)
    .bits(level, 8)
    .ue(0) // seq_parameter_set_id
    .ue(MAX_FRAME_NUM_LOG2 - 4) // log2_max_frame_num_minus4
    .ue(2) // pic_order_cnt_type 2: output order is decoding order, no POC in slice headers
    .ue(1) // max_num_ref_frames
    .flag(false) // gaps_in_frame_num_value_allowed_flag
    .ue(mbWidth - 1)
    .ue(mbHeight - 1)
    .flag(true) // frame_mbs_only_flag
    .flag(true); // direct_8x8_inference_flag
  // Sizes that are not whole macroblocks are cropped on the right and at the bottom, in units of 2 luma samples
  // for 4:2:0 frames (CropUnitX = CropUnitY = 2, §7.4.2.1.1); sizes are always even.
  const cropRight = (mbWidth * 16 - width) / 2;
  const cropBottom = (mbHeight * 16 - height) / 2;
  sps.flag(cropRight > 0 || cropBottom > 0);
  if (cropRight > 0 || cropBottom > 0) sps.ue(0).ue(cropRight).ue(0).ue(cropBottom);
  // VUI with square pixels only (aspect_ratio_idc 1), so players need not guess the sample aspect ratio.
  sps.flag(true).flag(true).bits(1, 8).zeros(8).trailing();

  const pps = new BitWriter()
    .bits(NAL_PPS, 8)
    .ue(0) // pic_parameter_set_id
    .ue(0) // seq_parameter_set_id
    .flag(false) // entropy_coding_mode_flag: CAVLC
    .flag(false) // bottom_field_pic_order_in_frame_present_flag
    .ue(0) // num_slice_groups_minus1
    .ue(0) // num_ref_idx_l0_default_active_minus1
    .ue(0) // num_ref_idx_l1_default_active_minus1
    .flag(false) // weighted_pred_flag
    .bits(0, 2) // weighted_bipred_idc
    .se(0) // pic_init_qp_minus26
    .se(0) // pic_init_qs_minus26
    .se(0) // chroma_qp_index_offset
    .flag(false) // deblocking_filter_control_present_flag
    .flag(false) // constrained_intra_pred_flag
    .flag(false) // redundant_pic_cnt_present_flag
    .trailing();

  const idr = new BitWriter()
    .bits(NAL_IDR, 8)
    .ue(0) // first_mb_in_slice
    .ue(7) // slice_type: I, as every slice of the picture
    .ue(0) // pic_parameter_set_id
    .bits(0, MAX_FRAME_NUM_LOG2) // frame_num
    .ue(0) // idr_pic_id
    .flag(false) // dec_ref_pic_marking: no_output_of_prior_pics_flag
    .flag(false) // long_term_reference_flag
    .se(0); // slice_qp_delta
  for (let i = 0; i < macroblocks; i++) idr.bits(GREY_MACROBLOCK, 8);
  idr.trailing();

  const skips = new Map<number, Buffer>();
  const skip = (frameNum: number): Buffer => {
    let nal = skips.get(frameNum);
    if (!nal) {
      nal = escape(
        new BitWriter()
          .bits(NAL_P, 8)
          .ue(0) // first_mb_in_slice
          .ue(5) // slice_type: P, as every slice of the picture
          .ue(0) // pic_parameter_set_id
          .bits(frameNum, MAX_FRAME_NUM_LOG2)
          .flag(false) // num_ref_idx_active_override_flag
          .flag(false) // ref_pic_list_modification_flag_l0
          .flag(false) // dec_ref_pic_marking: adaptive_ref_pic_marking_mode_flag (sliding window)
          .se(0) // slice_qp_delta
          .ue(macroblocks) // mb_skip_run: the whole picture is P_Skip
          .trailing()
          .done(),
      );
      skips.set(frameNum, nal);
    }
    return nal;
  };

  return {
    sps: escape(sps.done()),
    pps: escape(pps.done()),
    profile: PROFILE_BASELINE,
    compatibility: CONSTRAINED,
    level,
    idr: escape(idr.done()),
    skip,
  };
}

function levelFor(mbWidth: number, mbHeight: number): number {
  const frame = mbWidth * mbHeight;
  const found = LEVELS.find(
    ([, maxFs, maxMbps]) => frame <= maxFs && frame * LEVEL_FPS <= maxMbps && Math.max(mbWidth, mbHeight) ** 2 <= 8 * maxFs,
  );
  if (!found) throw new RangeError(`a ${mbWidth}x${mbHeight}-macroblock picture is beyond H.264 level 6`);
  return found[0];
}

/**
 * Emulation prevention (§7.4.1): inside a NAL unit, 00 00 followed by 00, 01, 02 or 03 gets a 03 between, so no
 * start code can appear by accident.
 */
function escape(nal: Buffer): Buffer {
  const out: number[] = [];
  let zeros = 0;
  for (const byte of nal) {
    if (zeros >= 2 && byte <= 3) {
      out.push(3);
      zeros = 0;
    }
    out.push(byte);
    zeros = byte === 0 ? zeros + 1 : 0;
  }
  return out.length === nal.length ? nal : Buffer.from(out);
}
