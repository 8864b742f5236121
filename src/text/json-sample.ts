import type { Random } from '../random/index.ts';

type Schema = Record<string, unknown>;

/**
 * A JSON value that satisfies a (simple) JSON Schema: objects with their required and listed properties, arrays,
 * enums and consts, strings, numbers, integers, booleans. Enough for `response_format: json_schema` and the
 * arguments of a forced tool call to be valid against the schema the caller sent.
 */
export function sampleJson(schema: Schema | undefined, random: Random, depth = 0): unknown {
  // The schema comes from the caller: anything that is not a schema object gives an empty object.
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema) || depth > 6) return {};
  if ('const' in schema) return schema['const'];
  if (Array.isArray(schema['enum']) && schema['enum'].length > 0) return schema['enum'][random.int(schema['enum'].length)];
  const variants = (schema['anyOf'] ?? schema['oneOf']) as Schema[] | undefined;
  if (Array.isArray(variants) && variants[0]) return sampleJson(variants[0], random, depth + 1);
  const type = Array.isArray(schema['type']) ? (schema['type'] as string[]).find((t) => t !== 'null') : schema['type'];
  switch (type) {
    case 'string':
      return VOCABULARY.nouns[random.int(VOCABULARY.nouns.length)] ?? 'value';
    case 'integer':
      return Math.max(Number(schema['minimum'] ?? 0), Math.min(Number(schema['maximum'] ?? 100), random.int(100)));
    case 'number':
      return Math.max(Number(schema['minimum'] ?? 0), Math.min(Number(schema['maximum'] ?? 100), random.int(10000) / 100));
    case 'boolean':
      return random.int(2) === 1;
    case 'null':
      return null;
    case 'array': {
      // The caller's schema may ask for millions of items: a sample needs a few.
      const count = Math.min(Math.max(Number(schema['minItems'] ?? 1) || 1, 1), 8);
      return Array.from({ length: count }, () => sampleJson(schema['items'] as Schema | undefined, random, depth + 1));
    }
    default: {
      const properties = (schema['properties'] ?? {}) as Record<string, Schema>;
      return Object.fromEntries(Object.entries(properties).map(([name, prop]) => [name, sampleJson(prop, random, depth + 1)]));
    }
  }
}

/**
 * The small vocabulary of generated text: a sentence is an opener, clauses of subject, verb and object joined by
 * connectives, and a closing phrase, each part a few of these words. Every verb agrees with every subject (third
 * person singular), so any pick reads as English. Strings of JSON samples are its nouns.
 */
export const VOCABULARY = {
  /** A one-word subject. */
  pronouns: ['it', 'this', 'that', 'everything'],
  /**
   * "the" and "a" the most often, as in English. "a" becomes "an" before a vowel: no word here starts with a
   * silent h or a "you" sound, so the letter decides.
   */
  determiners: ['the', 'the', 'the', 'a', 'a', 'each', 'this', 'every', 'that'],
  adjectives: ['clear', 'simple', 'small', 'helpful', 'careful', 'short', 'practical', 'steady', 'main', 'quick', 'final', 'good', 'solid', 'early', 'modest', 'broad'],
  nouns: ['plan', 'step', 'answer', 'result', 'idea', 'detail', 'example', 'approach', 'question', 'change', 'draft', 'test', 'method', 'choice', 'list', 'summary', 'outline', 'review', 'note', 'point'],
  /** A one-word object: plural or uncountable nouns, no determiner needed. */
  masses: ['everything', 'results', 'progress', 'details', 'clarity', 'time', 'effort', 'feedback', 'practice', 'attention'],
  verbs: ['shapes', 'supports', 'explains', 'improves', 'follows', 'changes', 'shows', 'needs', 'keeps', 'clarifies', 'simplifies', 'guides', 'strengthens', 'covers', 'frames', 'tests', 'answers', 'completes'],
  /** Joins a clause to the one before it, after a comma. */
  connectives: ['so', 'and', 'but', 'because', 'while', 'since'],
  openers: [['first'], ['then'], ['next'], ['also'], ['still'], ['finally'], ['usually'], ['often'], ['in', 'practice'], ['in', 'short'], ['over', 'time'], ['for', 'example'], ['at', 'first'], ['as', 'before']],
  closers: [['over', 'time'], ['with', 'care'], ['in', 'practice'], ['for', 'now'], ['in', 'the', 'end'], ['at', 'each', 'stage'], ['without', 'much', 'effort'], ['step', 'by', 'step']],
  /** Whole sentences of one word, and of two. */
  oneWord: [['indeed'], ['right'], ['agreed'], ['exactly'], ['sure']],
  twoWords: [['that', 'helps'], ['it', 'works'], ['fair', 'enough'], ['good', 'point'], ['keep', 'going'], ['that', 'matters']],
} as const;
