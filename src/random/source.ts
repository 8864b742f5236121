import { randomBytes } from 'node:crypto';

/**
 * One source of randomness for ids, secrets and generated text. With a seed it is repeatable (like Prism's
 * --seed), so a scenario replayed against a fresh emulator yields the same ids.
 */
export interface Random {
  /** `count` bytes. */
  bytes(count: number): Uint8Array;
  /** A string of `length` characters drawn from `alphabet`. */
  string(length: number, alphabet: string): string;
  /** An integer in [0, max). */
  int(max: number): number;
}

/** One item of a list, drawn from `random` (the list must not be empty). */
export const pick = <T>(random: Random, list: readonly T[]): T => list[random.int(list.length)] as T;

/** An integer in [0, max) from `word`, by rejection sampling (no modulo bias); 0 for an empty range. */
function below(max: number, word: () => number): number {
  if (max <= 0) return 0;
  const limit = Math.floor(0x1_0000_0000 / max) * max;
  for (;;) {
    const n = word();
    if (n < limit) return n % max;
  }
}

/** Where a Random draws from: bytes, and 32-bit words (big-endian, as the next four bytes would read). */
interface Source {
  bytes(count: number): Uint8Array;
  word(): number;
}

export function createRandom(seed?: string): Random {
  const source = seed === undefined ? CRYPTO : seededSource(seed);
  const { word } = source;
  return {
    bytes: source.bytes,
    // Nothing drawn for an empty range: a seeded stream goes on as it did.
    int: (max) => (max <= 0 ? 0 : below(max, word)),
    string(length, alphabet) {
      // One word a character (more where one is rejected), nothing allocated per draw: a request id, 24 characters,
      // is drawn for every request and a generated answer draws thousands of words. Made in one go: a string grown
      // a character at a time is a tree of as many pieces (some 400 bytes for a request id, kept as long as the id
      // is: the client log keeps 10,000).
      const codes = new Array<number>(length);
      for (let i = 0; i < length; i++) codes[i] = alphabet.charCodeAt(below(alphabet.length, word));
      return String.fromCharCode(...codes);
    },
  };
}

// One system call per few thousand ids instead of one per character: every request draws a 24-character id.
const POOL_SIZE = 4096;
let pool = randomBytes(POOL_SIZE);
let poolOffset = 0;

/** Where the next `count` bytes of the pool start (at most POOL_SIZE); a fresh pool when too few are left. */
function take(count: number): number {
  if (poolOffset + count > POOL_SIZE) {
    pool = randomBytes(POOL_SIZE);
    poolOffset = 0;
  }
  poolOffset += count;
  return poolOffset - count;
}

function cryptoBytes(count: number): Uint8Array {
  if (count > POOL_SIZE) return new Uint8Array(randomBytes(count));
  const at = take(count);
  return new Uint8Array(pool.subarray(at, at + count));
}

const cryptoWord = (): number => pool.readUInt32BE(take(4));

const CRYPTO: Source = { bytes: cryptoBytes, word: cryptoWord };

/** sfc32 seeded from a string hash: small, fast, and good enough for repeatable test data (not for secrets). */
function seededSource(seed: string): Source {
  let h = 1779033703 ^ seed.length;
  for (let i = 0; i < seed.length; i++) {
    h = Math.imul(h ^ seed.charCodeAt(i), 3432918353);
    h = (h << 13) | (h >>> 19);
  }
  const mix = (): number => {
    h = Math.imul(h ^ (h >>> 16), 2246822507);
    h = Math.imul(h ^ (h >>> 13), 3266489909);
    return (h ^= h >>> 16) >>> 0;
  };
  let a = mix();
  let b = mix();
  let c = mix();
  let d = mix();
  const next32 = (): number => {
    a >>>= 0;
    b >>>= 0;
    c >>>= 0;
    d >>>= 0;
    let t = (a + b) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    d = (d + 1) | 0;
    t = (t + d) | 0;
    c = (c + t) | 0;
    return t >>> 0;
  };
  return {
    // Each word's bytes low first; a word drawn as one reads them high first, as four bytes read as a word do.
    bytes(count) {
      const out = new Uint8Array(count);
      for (let i = 0; i < count; i += 4) {
        const word = next32();
        for (let j = 0; j < 4 && i + j < count; j++) out[i + j] = (word >>> (8 * j)) & 0xff;
      }
      return out;
    },
    word() {
      const w = next32();
      return (((w & 0xff) << 24) | ((w & 0xff00) << 8) | ((w >>> 8) & 0xff00) | (w >>> 24)) >>> 0;
    },
  };
}
