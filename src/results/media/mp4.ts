import type { AvcStream } from './h264.ts';
import { MAX_FRAME_NUM } from './h264.ts';

/**
 * An MP4 (ISO/IEC 14496-12 and -15) holding one H.264 video track: the IDR picture, then skipped pictures until
 * the duration is reached, all in one chunk. `moov` comes before `mdat` so players can start before the end.
 */
export interface StillVideo {
  width: number;
  height: number;
  /** Whole milliseconds, at least 1: mvhd, tkhd and mdhd all count in milliseconds. */
  durationMs: number;
  /** QuickTime metadata items (`moov/udta/meta` with an `mdta` handler): key → UTF-8 value. */
  metadata: Readonly<Record<string, string>>;
}

/** 25 frames a second; a clip longer than a minute keeps 1,500 frames, each longer, so files stay small. */
const FRAME_MS = 40;
const MAX_FRAMES = 1500;
const TIMESCALE = 1000;

export function stillVideoMp4(stream: AvcStream, video: StillVideo): Buffer {
  const { durationMs } = video;
  const frameMs = durationMs <= FRAME_MS * MAX_FRAMES ? FRAME_MS : Math.ceil(durationMs / MAX_FRAMES / FRAME_MS) * FRAME_MS;
  const frames = Math.ceil(durationMs / frameMs);
  const lastMs = durationMs - frameMs * (frames - 1);

  // Samples are length-prefixed NAL units (avcC lengthSizeMinusOne = 3); frame_num counts modulo MAX_FRAME_NUM.
  const samples = [stream.idr];
  for (let i = 1; i < frames; i++) samples.push(stream.skip(i % MAX_FRAME_NUM));
  const payload = Buffer.concat(samples.flatMap((nal) => [u32(nal.length), nal]));

  const ftyp = box('ftyp', ascii('isom'), u32(0x200), ascii('isom'), ascii('iso2'), ascii('avc1'), ascii('mp41'));
  const table: SampleTable = { frames, frameMs, lastMs, sizes: samples.map((nal) => nal.length + 4), chunkOffset: 0 };
  // The chunk offset depends on moov's own size, which does not depend on the offset's value (a 32-bit field).
  const build = (chunkOffset: number): Buffer =>
    box(
      'moov',
      mvhd(durationMs),
      box(
        'trak',
        tkhd(video, durationMs),
        box('mdia', mdhd(durationMs), hdlr('vide', 'VideoHandler'), minf(stream, video, { ...table, chunkOffset })),
      ),
      udta(video.metadata),
    );
  const moov = build(ftyp.length + build(0).length + 8);
  return Buffer.concat([ftyp, moov, u32(8 + payload.length), ascii('mdat'), payload]);
}

interface SampleTable {
  frames: number;
  frameMs: number;
  lastMs: number;
  sizes: number[];
  chunkOffset: number;
}

function mvhd(durationMs: number): Buffer {
  // Times of creation and modification stay 0 (unknown): the same shape always gives the same bytes.
  const times = [u32(0), u32(0), u32(TIMESCALE), u32(durationMs)];
  // rate 1.0, volume 1.0, reserved, matrix, pre_defined, next_track_ID
  return fullBox('mvhd', 0, 0, ...times, u32(0x00010000), u16(0x0100), zeros(10), MATRIX, zeros(24), u32(2));
}

function tkhd(video: StillVideo, durationMs: number): Buffer {
  // flags 3: enabled and in the movie; width and height are 16.16 fixed point, the picture's cropped size.
  const times = [u32(0), u32(0), u32(1), u32(0), u32(durationMs)]; // created, modified, track_ID, reserved, duration
  const layerGroupVolume = zeros(16); // reserved, layer, alternate_group, volume (0 for video), reserved
  return fullBox('tkhd', 0, 3, ...times, layerGroupVolume, MATRIX, u32(video.width * 0x10000), u32(video.height * 0x10000));
}

function mdhd(durationMs: number): Buffer {
  // language `und` packed as three 5-bit letters
  return fullBox('mdhd', 0, 0, u32(0), u32(0), u32(TIMESCALE), u32(durationMs), u16(0x55c4), u16(0));
}

function hdlr(type: string, name: string): Buffer {
  return fullBox('hdlr', 0, 0, u32(0), ascii(type), zeros(12), Buffer.from(`${name}\0`, 'utf8'));
}

function minf(stream: AvcStream, video: StillVideo, table: SampleTable): Buffer {
  const stts = table.frames > 1 ? [[table.frames - 1, table.frameMs], [1, table.lastMs]] : [[1, table.lastMs]];
  return box(
    'minf',
    fullBox('vmhd', 0, 1, zeros(8)),
    box('dinf', fullBox('dref', 0, 0, u32(1), fullBox('url ', 0, 1))),
    box(
      'stbl',
      fullBox('stsd', 0, 0, u32(1), avc1(stream, video)),
      fullBox('stts', 0, 0, u32(stts.length), ...stts.flat().map(u32)),
      fullBox('stss', 0, 0, u32(1), u32(1)), // only the first sample is a sync sample
      fullBox('stsc', 0, 0, u32(1), u32(1), u32(table.frames), u32(1)),
      fullBox('stsz', 0, 0, u32(0), u32(table.frames), ...table.sizes.map(u32)),
      fullBox('stco', 0, 0, u32(1), u32(table.chunkOffset)),
    ),
  );
}

function avc1(stream: AvcStream, video: StillVideo): Buffer {
  const avcC = box(
    'avcC',
    Buffer.from([1, stream.profile, stream.compatibility, stream.level, 0xff, 0xe1]), // 4-byte lengths, one SPS
    u16(stream.sps.length),
    stream.sps,
    Buffer.from([1]), // one PPS
    u16(stream.pps.length),
    stream.pps,
  );
  return box(
    'avc1',
    zeros(6),
    u16(1), // data_reference_index
    zeros(16),
    u16(video.width),
    u16(video.height),
    u32(0x00480000), // 72 dpi
    u32(0x00480000),
    u32(0),
    u16(1), // frame_count
    zeros(32), // compressorname (empty)
    u16(0x18), // depth
    u16(0xffff), // pre_defined = -1
    avcC,
  );
}

/**
 * Metadata the way `ffmpeg -movflags use_metadata_tags -metadata KEY=VALUE` writes it, which is how the TC260
 * practice guide's reference code labels MP4 files: `udta/meta` (version 0), an `mdta` handler, `keys` naming each
 * key in the `mdta` namespace, and `ilst` items numbered by key holding a UTF-8 (type 1) `data` box.
 */
function udta(metadata: Readonly<Record<string, string>>): Buffer {
  const entries = Object.entries(metadata);
  const keys = fullBox('keys', 0, 0, u32(entries.length), ...entries.map(([key]) => box('mdta', Buffer.from(key, 'utf8'))));
  const items = entries.map(([, value], i) => box(i + 1, box('data', u32(1), u32(0), Buffer.from(value, 'utf8'))));
  return box('udta', fullBox('meta', 0, 0, hdlr('mdta', ''), keys, box('ilst', ...items)));
}

const MATRIX = Buffer.concat([0x00010000, 0, 0, 0, 0x00010000, 0, 0, 0, 0x40000000].map(u32));

/** A box: 32-bit size, four-character type (or a 32-bit number, as ilst items are), content. */
function box(type: string | number, ...content: Buffer[]): Buffer {
  const size = 8 + content.reduce((sum, part) => sum + part.length, 0);
  return Buffer.concat([u32(size), typeof type === 'number' ? u32(type) : ascii(type), ...content]);
}

function fullBox(type: string, version: number, flags: number, ...content: Buffer[]): Buffer {
  return box(type, u32(((version & 0xff) << 24) | (flags & 0xffffff)), ...content);
}

function u32(value: number): Buffer {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(value >>> 0);
  return bytes;
}

function u16(value: number): Buffer {
  const bytes = Buffer.alloc(2);
  bytes.writeUInt16BE(value & 0xffff);
  return bytes;
}

const zeros = (count: number): Buffer => Buffer.alloc(count);
const ascii = (text: string): Buffer => Buffer.from(text, 'latin1');
