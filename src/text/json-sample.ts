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
      return WORDS[random.int(WORDS.length)] ?? 'value';
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

export const WORDS = [
  'the', 'a', 'clear', 'plan', 'works', 'best', 'when', 'each', 'step', 'is', 'small', 'and', 'easy', 'to', 'check',
  'first', 'then', 'next', 'finally', 'result', 'answer', 'question', 'you', 'asked', 'about', 'this', 'gives', 'good',
  'simple', 'example', 'data', 'service', 'points', 'task', 'video', 'note', 'model', 'time', 'value', 'list', 'short',
  'useful', 'detail', 'reason', 'because', 'so', 'it', 'can', 'help', 'with', 'your', 'work', 'today', 'well',
] as const;
