import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

/**
 * SQLite's write-ahead log and its index as bytes: the checksum, the log's header and frames, the index header a
 * writer leaves in `-shm`. Pure reading, for wal-check.ts.
 * @see https://www.sqlite.org/fileformat2.html#the_write_ahead_log (format, checksums)
 * @see https://www.sqlite.org/walformat.html (the wal-index header and checkpoint info)
 */

/** Bytes of a file, read at an offset (fewer at its end). */
export interface Bytes {
  readonly size: number;
  read(offset: number, length: number): Uint8Array;
}

export const WAL_HEADER = 32;
export const FRAME_HEADER = 24;
export const WAL_VERSION = 3007000;
export const WAL_MAGIC = 0x377f0682;

/** A checksum's two running sums. */
export type Sums = readonly [number, number];

export const u32 = (b: Uint8Array, at: number): number =>
  ((b[at] as number) * 0x1000000 + (((b[at + 1] as number) << 16) | ((b[at + 2] as number) << 8) | (b[at + 3] as number))) >>> 0;

/** SQLite's WAL checksum: pairs of 32-bit words (big- or little-endian), two running sums, continued from `s`. */
export function walChecksum(data: Uint8Array, bigEndian: boolean, s: Sums = [0, 0]): [number, number] {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let [s0, s1] = s;
  for (let i = 0; i + 8 <= data.byteLength; i += 8) {
    s0 = (s0 + view.getUint32(i, !bigEndian) + s1) >>> 0;
    s1 = (s1 + view.getUint32(i + 4, !bigEndian) + s0) >>> 0;
  }
  return [s0, s1];
}

/**
 * The checksum over `data` as a function of where it starts. Each step adds to the sums, so the end is affine in
 * the start (mod 2^32): `end = M·start + end(0, 0)`. Trying many starts over one long page costs one pass.
 */
export function checksumFrom(data: Uint8Array, bigEndian: boolean): (start: Sums) => [number, number] {
  const zero = walChecksum(data, bigEndian);
  const a = walChecksum(data, bigEndian, [1, 0]);
  const b = walChecksum(data, bigEndian, [0, 1]);
  const m = [(a[0] - zero[0]) >>> 0, (b[0] - zero[0]) >>> 0, (a[1] - zero[1]) >>> 0, (b[1] - zero[1]) >>> 0] as const;
  return ([s0, s1]) => [(Math.imul(m[0], s0) + Math.imul(m[1], s1) + zero[0]) >>> 0, (Math.imul(m[2], s0) + Math.imul(m[3], s1) + zero[1]) >>> 0];
}

export const sameSums = (a: Sums, b: Sums): boolean => a[0] === b[0] && a[1] === b[1];
export const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => a.byteLength === b.byteLength && a.every((byte, i) => byte === b[i]);
export const validPageSize = (size: number): boolean => size >= 512 && size <= 65536 && (size & (size - 1)) === 0;

export interface Frame {
  /** 1-based, as SQLite counts them. */
  n: number;
  offset: number;
  page: number;
  /** Pages in the database after this commit; 0 for a frame that is not a commit. */
  commit: number;
  salts: Sums;
  stored: Sums;
}

export function frameAt(wal: Bytes, n: number, pageSize: number): Frame {
  const offset = WAL_HEADER + (n - 1) * (FRAME_HEADER + pageSize);
  const h = wal.read(offset, FRAME_HEADER);
  return { n, offset, page: u32(h, 0), commit: u32(h, 4), salts: [u32(h, 8), u32(h, 12)], stored: [u32(h, 16), u32(h, 20)] };
}

/** The wal-index header a killed writer left, when it is whole (both copies equal, checksum right). */
export interface Index {
  salts: Sums;
  /** The last frame of a committed transaction. */
  mxFrame: number;
  /** Frames copied into the database file by the last checkpoint that finished. */
  nBackfill: number;
}

export function readIndex(shm: Bytes | null): Index | null {
  if (!shm || shm.size < 136) return null;
  const head = shm.read(0, 136);
  if (head.byteLength < 136 || !sameBytes(head.subarray(0, 48), head.subarray(48, 96))) return null;
  // The index is in the machine's byte order: whichever reads the version right.
  const view = new DataView(head.buffer, head.byteOffset, head.byteLength);
  const little = view.getUint32(0, true) === WAL_VERSION;
  if ((!little && view.getUint32(0, false) !== WAL_VERSION) || head[12] !== 1) return null;
  const sums = walChecksum(head.subarray(0, 40), !little);
  if (!sameSums(sums, [view.getUint32(40, little), view.getUint32(44, little)])) return null;
  // The salts are the log header's bytes, copied as they are.
  const mxFrame = view.getUint32(16, little);
  const nBackfill = view.getUint32(96, little);
  return { salts: [u32(head, 32), u32(head, 36)], mxFrame, nBackfill: nBackfill <= mxFrame ? nBackfill : 0 };
}

/** A file as `Bytes`, read where asked; null when it is missing. */
export function fileBytes(path: string): (Bytes & { close(): void }) | null {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  const size = fstatSync(fd).size;
  return {
    size,
    read(offset, length) {
      const buffer = Buffer.alloc(Math.max(0, Math.min(length, size - offset)));
      if (buffer.byteLength > 0) readSync(fd, buffer, 0, buffer.byteLength, offset);
      return buffer;
    },
    close: () => closeSync(fd),
  };
}
