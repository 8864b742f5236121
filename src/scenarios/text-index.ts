import { requiredLiterals } from './regex-source.ts';

// The texts of one text call as match conditions read them, made cheap to read many times: each lowered once for
// the case-insensitive conditions and, when many rules read it, indexed by the pairs of adjacent characters it
// holds. A needle with a pair the text lacks cannot be in it: with a thousand rules, most are ruled
// out by a few bit tests instead of a scan of the prompt each. The index only ever rules out; every condition it
// lets through is tested on the text itself, as before.

/** Slots of the index: 4,096 bits, 512 bytes; a prompt of a few hundred characters fills some 3 % of them. */
export const SLOT_BITS = 12;
/** Pairs of a needle tested at most: the likely rarest. */
const MOST_PAIRS = 8;

/** The slot of a pair of adjacent UTF-16 code units. */
const slotOf = (a: number, b: number): number => Math.imul((a << 16) | b, 0x9e3779b1) >>> (32 - SLOT_BITS);

/** How rare a character is in prose, roughly: digits and signs before capitals, capitals before letters and spaces. */
const rarity = (code: number): number => (code === 32 ? 0 : (code >= 97 && code <= 122) ? 1 : (code >= 65 && code <= 90) ? 2 : 3);

/** The slots of a needle's pairs, the likely rarest first, and how rare the first is (-1: none). */
export interface Pairs {
  slots: readonly number[];
  rarest: number;
}

/** The pairs of a needle, each once; none for a needle under two characters. */
export const pairsOf = (needle: string): Pairs => rarestPairs([needle]);

/** The pairs of every needle, each once, the likely rarest first (MOST_PAIRS of them at most). */
function rarestPairs(needles: readonly string[]): Pairs {
  const pairs = new Map<number, number>();
  for (const needle of needles) {
    for (let i = 0; i + 1 < needle.length; i++) {
      const a = needle.charCodeAt(i);
      const b = needle.charCodeAt(i + 1);
      const slot = slotOf(a, b);
      pairs.set(slot, Math.max(pairs.get(slot) ?? 0, rarity(a) + rarity(b)));
    }
  }
  const ranked = [...pairs].sort((x, y) => y[1] - x[1]).slice(0, MOST_PAIRS);
  return { slots: ranked.map(([slot]) => slot), rarest: ranked[0]?.[1] ?? -1 };
}

/** Words of one index. */
const WORDS = 1 << (SLOT_BITS - 5);

/**
 * Where the indexes of one call's texts are kept: one allocation for all of them (an Int32Array costs more to
 * make than to fill), made when the first is built.
 */
export class IndexRoom {
  private bits: Int32Array | null = null;
  private used = 0;

  /** Room for one more index: the array and the offset of its words. */
  take(): { bits: Int32Array; at: number } {
    // Four texts in two forms each: a call's own room holds them all; anything more gets an array of its own.
    if (this.bits === null) this.bits = new Int32Array(8 * WORDS);
    if (this.used === 8) return { bits: new Int32Array(WORDS), at: 0 };
    return { bits: this.bits, at: WORDS * this.used++ };
  }
}

/** One text of a call (the last user message, the system text, a tool result) or several (every message). */
export class Subject {
  readonly texts: readonly string[];
  private readonly room: IndexRoom;
  private lowered: readonly string[] | null = null;
  /** Per form (0 raw, 1 lowered): whether it is worth an index, and where the index is once built. */
  private readonly indexed: readonly [boolean, boolean];
  private readonly index: ({ bits: Int32Array; at: number } | null)[] = [null, null];

  /** `indexed`: per form, whether enough rules read it for an index to cost less than their scans. */
  constructor(texts: readonly string[], room: IndexRoom, indexed: readonly [boolean, boolean]) {
    this.texts = texts;
    this.room = room;
    this.indexed = indexed;
  }

  /** The texts as a condition compares them: as sent, or lower-cased (made once for every condition). */
  textsAs(folded: boolean): readonly string[] {
    if (!folded) return this.texts;
    return (this.lowered ??= this.texts.map((text) => text.toLowerCase()));
  }

  /**
   * Whether one of the texts (as sent, or lower-cased) may hold every pair: false when none can, so a needle
   * with these pairs is in none of them; true when a scan must tell.
   */
  mayHold(pairs: Pairs, folded: boolean): boolean {
    if (pairs.slots.length === 0) return true;
    const index = this.indexAs(folded);
    if (index === null) return true;
    const { bits, at } = index;
    for (const slot of pairs.slots) if ((bits[at + (slot >>> 5)]! & (1 << (slot & 31))) === 0) return false;
    return true;
  }

  /** `mayHold` of one pair. */
  mayHoldOne(slot: number, folded: boolean): boolean {
    const index = this.indexAs(folded);
    return index === null || (index.bits[index.at + (slot >>> 5)]! & (1 << (slot & 31))) !== 0;
  }

  /** The index of the texts in one form, built when first asked for; null for a form not worth one. */
  private indexAs(folded: boolean): { bits: Int32Array; at: number } | null {
    const form = folded ? 1 : 0;
    const index = this.index[form] ?? null;
    if (index !== null || !this.indexed[form]) return index;
    const made = this.room.take();
    fill(made.bits, made.at, this.textsAs(folded));
    return (this.index[form] = made);
  }
}

/** Sets the bits of every pair of the texts in the index at `at`. */
function fill(bits: Int32Array, at: number, texts: readonly string[]): void {
  for (const text of texts) {
    let a = text.charCodeAt(0);
    for (let i = 1; i < text.length; i++) {
      const b = text.charCodeAt(i);
      const slot = slotOf(a, b);
      bits[at + (slot >>> 5)]! |= 1 << (slot & 31);
      a = b;
    }
  }
}

/**
 * The pairs every text a regular expression matches has: those of its required literals; for a case-insensitive
 * one, of those in ASCII, lower-cased (such a pattern matches an ASCII letter only in either of its two cases, as
 * `toLowerCase` leaves it).
 */
export function regexPairs(source: string, folded: boolean): Pairs {
  const runs = requiredLiterals(source).filter((run) => !folded || !/[^\x20-\x7e]/.test(run));
  return rarestPairs(runs.map((run) => (folded ? run.toLowerCase() : run)));
}
