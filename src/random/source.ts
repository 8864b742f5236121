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

export function createRandom(seed?: string): Random {
  const next = seed === undefined ? cryptoBytes : seededBytes(seed);
  const api: Random = {
    bytes: next,
    int(max) {
      if (max <= 0) return 0;
      // Rejection sampling avoids modulo bias.
      const limit = Math.floor(0x1_0000_0000 / max) * max;
      for (;;) {
        const b = next(4);
        const n = (((b[0] ?? 0) << 24) | ((b[1] ?? 0) << 16) | ((b[2] ?? 0) << 8) | (b[3] ?? 0)) >>> 0;
        if (n < limit) return n % max;
      }
    },
    string(length, alphabet) {
      // What `length` calls of int(alphabet.length) draw, the same words in the same order, in one draw of
      // bytes (more only after a rejection): every request makes a 24-character id.
      const max = alphabet.length;
      const limit = Math.floor(0x1_0000_0000 / max) * max;
      let bytes = next(length * 4);
      let at = 0;
      // Joined once at the end: a string grown a character at a time is a tree of as many pieces (some 400 bytes
      // for a request id, kept as long as the id is: the client log keeps 10,000).
      const out: string[] = [];
      for (let made = 0; made < length; ) {
        if (at + 4 > bytes.length) {
          bytes = next(4);
          at = 0;
        }
        const n = (((bytes[at] ?? 0) << 24) | ((bytes[at + 1] ?? 0) << 16) | ((bytes[at + 2] ?? 0) << 8) | (bytes[at + 3] ?? 0)) >>> 0;
        at += 4;
        if (n >= limit) continue;
        out.push(alphabet[n % max] as string);
        made += 1;
      }
      return out.join('');
    },
  };
  return api;
}

// One system call per few thousand ids instead of one per character: every request draws a 24-character id.
const POOL_SIZE = 4096;
let pool = randomBytes(POOL_SIZE);
let poolOffset = 0;

function cryptoBytes(count: number): Uint8Array {
  if (count > POOL_SIZE) return new Uint8Array(randomBytes(count));
  if (poolOffset + count > POOL_SIZE) {
    pool = randomBytes(POOL_SIZE);
    poolOffset = 0;
  }
  const out = new Uint8Array(pool.subarray(poolOffset, poolOffset + count));
  poolOffset += count;
  return out;
}

/** sfc32 seeded from a string hash: small, fast, and good enough for repeatable test data (not for secrets). */
function seededBytes(seed: string): (count: number) => Uint8Array {
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
  return (count) => {
    const out = new Uint8Array(count);
    for (let i = 0; i < count; i += 4) {
      const word = next32();
      for (let j = 0; j < 4 && i + j < count; j++) out[i + j] = (word >>> (8 * j)) & 0xff;
    }
    return out;
  };
}
