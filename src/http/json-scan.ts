/**
 * How deep a JSON text nests, read from its bytes before anything parses them. JSON.parse builds every level of a
 * `[[[[…]]]]` before its caller can see how deep it goes: a 19 MB body was 9.5 million arrays, seconds of the
 * event loop and a gigabyte of memory. This reads the bytes as they arrive, a chunk at a time, and stops at the
 * first bracket past the maximum; nothing is built.
 *
 * Brackets count outside strings only; a string ends at a quote preceded by an even run of backslashes. The bytes
 * may be UTF-8 of any kind: no byte of a multi-byte sequence is below 0x80, so none looks like a quote, a
 * backslash or a bracket. For a valid JSON text the depth is exact. For an invalid one it is exact up to the
 * first syntax error, where JSON.parse stops too: whatever this misses there, nothing builds.
 */
export interface DepthScan {
  /** Reads the text's next bytes; false once it has nested past the maximum (the rest is not looked at). */
  write(bytes: Uint8Array): boolean;
  /** Where the text went past the maximum: the byte offset of the bracket that opens the level one too deep. */
  readonly overAt: number | null;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

/** A scan that refuses a text nesting deeper than `maxDepth` arrays and objects (the top-level value is level 1). */
export function depthScan(maxDepth: number): DepthScan {
  let depth = 0;
  let inString = false;
  /** In a string, whether the next byte is escaped (the last chunk ended in an odd run of backslashes). */
  let escaped = false;
  /** Bytes read before the current chunk. */
  let offset = 0;
  let overAt: number | null = null;
  return {
    get overAt() {
      return overAt;
    },
    write(bytes) {
      if (overAt !== null) return false;
      const length = bytes.length;
      let i = 0;
      while (i < length) {
        if (inString) {
          // Strings are most of a large body: jump from quote to quote (indexOf is native) rather than byte by byte.
          const quote = bytes.indexOf(QUOTE, i);
          const end = quote === -1 ? length : quote;
          let run = 0;
          while (end - run > i && bytes[end - run - 1] === BACKSLASH) run++;
          // A run that reaches back to the chunk's start continues the last chunk's.
          const backslashes = run + (run === end - i && escaped ? 1 : 0);
          if (quote === -1) {
            escaped = backslashes % 2 === 1;
            break;
          }
          escaped = false;
          inString = backslashes % 2 === 1;
          i = quote + 1;
          continue;
        }
        const byte = bytes[i];
        if (byte === QUOTE) inString = true;
        else if (byte === OPEN_ARRAY || byte === OPEN_OBJECT) {
          if (++depth > maxDepth) {
            overAt = offset + i;
            return false;
          }
        } else if (byte === CLOSE_ARRAY || byte === CLOSE_OBJECT) depth--;
        i++;
      }
      offset += length;
      return true;
    },
  };
}
