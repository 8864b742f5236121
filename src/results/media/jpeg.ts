import { BitWriter } from './bits.ts';

/**
 * A baseline JPEG (ITU-T T.81, JFIF 1.02) of one flat grey: a single-component (greyscale) frame whose every 8×8
 * block has the same DC value and no AC coefficient, so the image needs no encoder. The grey is 130, what the
 * video's mid-grey (limited-range Y = 128) shows as, so the cover is the video's frame.
 *
 * Huffman tables of the fewest codes keep it small (2 bits a block): DC categories 0 (`0`) and 1 (`10`), AC only
 * EOB (`0`). The first block codes a DC difference of +1, the others 0; each ends with EOB.
 */
export function greyJpeg(width: number, height: number, app1: readonly Buffer[] = []): Buffer {
  const blocks = Math.ceil(width / 8) * Math.ceil(height / 8);
  // DC of a flat block of value v is 8·(v − 128) (T.81 A.3.3); with a DC quantizer of 16, 130 quantizes to 1.
  const scan = new BitWriter().bits(0b10, 2).bits(1, 1).bits(0, 1); // DC category 1, +1, EOB
  scan.zeros(2 * (blocks - 1)).align(1);

  return Buffer.concat([
    marker(0xd8),
    // JFIF APP0: version 1.02, no units, 1:1 density, no thumbnail.
    segment(0xe0, Buffer.from('JFIF\0', 'latin1'), Buffer.from([1, 2, 0, 0, 1, 0, 1, 0, 0])),
    ...app1.map((payload) => segment(0xe1, payload)),
    // One 8-bit quantization table, all 16 (only its DC entry is ever used).
    segment(0xdb, Buffer.from([0x00]), Buffer.alloc(64, 16)),
    segment(0xc0, Buffer.from([8]), u16(height), u16(width), Buffer.from([1, 1, 0x11, 0])), // SOF0, 1 component
    // DHT: class/id, then the count of codes of each length 1…16, then the symbols.
    segment(0xc4, Buffer.from([0x00, 1, 1, ...Array<number>(14).fill(0), 0x00, 0x01])),
    segment(0xc4, Buffer.from([0x10, 1, ...Array<number>(15).fill(0), 0x00])),
    segment(0xda, Buffer.from([1, 1, 0x00, 0, 63, 0])), // SOS: component 1, tables 0/0, Ss 0, Se 63, Ah/Al 0
    stuff(scan.done()),
    marker(0xd9),
  ]);
}

/** The largest payload of one marker segment (its 16-bit length counts itself). */
export const MAX_SEGMENT_PAYLOAD = 0xffff - 2;

const marker = (code: number): Buffer => Buffer.from([0xff, code]);

function segment(code: number, ...payload: Buffer[]): Buffer {
  const body = Buffer.concat(payload);
  if (body.length > MAX_SEGMENT_PAYLOAD) throw new RangeError('a JPEG marker segment holds at most 65533 bytes');
  return Buffer.concat([marker(code), u16(body.length + 2), body]);
}

/** Byte stuffing (T.81 §F.1.2.3): a 0xFF in entropy-coded data is followed by 0x00. */
function stuff(data: Buffer): Buffer {
  if (!data.includes(0xff)) return data;
  const out: number[] = [];
  for (const byte of data) {
    out.push(byte);
    if (byte === 0xff) out.push(0);
  }
  return Buffer.from(out);
}

function u16(value: number): Buffer {
  const bytes = Buffer.alloc(2);
  bytes.writeUInt16BE(value);
  return bytes;
}
