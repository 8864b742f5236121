import fc from 'fast-check';
import type { DocumentName } from '../../support/spec-check.ts';
import { deref, isObject } from './documents.ts';
import type { Schema } from './documents.ts';
import { SCALAR_NASTIES, keyArb } from './mutations.ts';

// Arbitraries from the schemas

const URIS = ['https://hooks.example.com/cb', 'https://example.com/a.png', 'https://93.184.216.34/x', 'http://example.com/x', 'ftp://x', 'not a uri'];
const clampLength = (n: unknown, fallback: number, cap: number): number => Math.min(typeof n === 'number' ? n : fallback, cap);

/** Values a schema allows (mostly), with its boundaries and a step past them now and then. */
export function fromSchema(doc: DocumentName, raw: Schema, depth = 0): fc.Arbitrary<unknown> {
  const { doc: d, schema } = deref(doc, raw);
  if (depth > 6) return fc.constant(null);
  if ('const' in schema) return fc.constant(schema['const']);
  if (Array.isArray(schema['enum']) && schema['enum'].length > 0) {
    return fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...(schema['enum'] as unknown[])) }, { weight: 1, arbitrary: fc.string({ maxLength: 6 }) });
  }
  const variants = (schema['oneOf'] ?? schema['anyOf']) as Schema[] | undefined;
  if (Array.isArray(variants) && schema['type'] === undefined && schema['properties'] === undefined) {
    return fc.oneof(...variants.map((v) => fromSchema(d, v, depth + 1)));
  }
  if ('not' in schema) return fc.jsonValue({ maxDepth: 1 });
  const types = ([] as unknown[]).concat(schema['type'] ?? (schema['properties'] ? 'object' : []));
  if (types.length === 0) return fc.jsonValue({ maxDepth: 2 });
  return fc.oneof(...types.map((type) => forType(d, schema, String(type), depth)));
}

function forType(doc: DocumentName, schema: Schema, type: string, depth: number): fc.Arbitrary<unknown> {
  const num = (v: unknown, fallback: number): number => (typeof v === 'number' ? v : fallback);
  switch (type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer': {
      const min = num(schema['minimum'], -1000);
      const max = num(schema['maximum'], Math.max(min + 1000, 1000));
      return fc.oneof(
        { weight: 6, arbitrary: fc.integer({ min: Math.max(min, -(2 ** 31)), max: Math.min(max, 2 ** 31 - 1) }) },
        { weight: 2, arbitrary: fc.constantFrom(min, max) },
        { weight: 1, arbitrary: fc.constantFrom(min - 1, max + 1, 1.5) },
      );
    }
    case 'number': {
      const min = num(schema['minimum'], num(schema['exclusiveMinimum'], -1e6));
      const max = num(schema['maximum'], 1e6);
      return fc.oneof(
        { weight: 6, arbitrary: fc.double({ min, max, noNaN: true, noDefaultInfinity: true, minExcluded: 'exclusiveMinimum' in schema }) },
        { weight: 1, arbitrary: fc.constantFrom(min, max, min - 1, max + 0.5) },
      );
    }
    case 'string': {
      const maxLength = typeof schema['maxLength'] === 'number' ? schema['maxLength'] : undefined;
      const minLength = typeof schema['minLength'] === 'number' ? schema['minLength'] : 0;
      let base: fc.Arbitrary<string>;
      if (schema['format'] === 'uri') base = fc.constantFrom(...URIS);
      else if (typeof schema['pattern'] === 'string') {
        base = fc.stringMatching(new RegExp(schema['pattern'])).map((s) => (maxLength === undefined ? s : s.slice(0, maxLength)));
      } else base = fc.string({ minLength: Math.min(minLength, 24), maxLength: Math.max(Math.min(minLength, 24), clampLength(maxLength, 24, 24)) });
      if (maxLength === undefined) return base;
      return fc.oneof(
        { weight: 8, arbitrary: base },
        { weight: 1, arbitrary: fc.constantFrom('x'.repeat(maxLength), 'x'.repeat(maxLength + 1), 'é'.repeat(maxLength + 1)) },
      );
    }
    case 'array': {
      const items = isObject(schema['items']) ? fromSchema(doc, schema['items'], depth + 1) : fc.jsonValue({ maxDepth: 1 });
      const minItems = clampLength(schema['minItems'], 0, 3);
      const maxItems = Math.max(minItems, clampLength(schema['maxItems'], 3, 3));
      return fc.array(items, { minLength: minItems, maxLength: maxItems });
    }
    default: {
      const properties = isObject(schema['properties']) ? schema['properties'] : undefined;
      if (!properties) {
        const additional = schema['additionalProperties'];
        if (isObject(additional)) {
          return fc.dictionary(fc.string({ minLength: 1, maxLength: 12 }), fromSchema(doc, additional, depth + 1), { maxKeys: 3 });
        }
        // A free-form object: field names the documents use elsewhere (file records, tasks), values of any type.
        return fc.dictionary(keyArb, fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.constantFrom(...SCALAR_NASTIES)), { maxKeys: 3 });
      }
      const required = Array.isArray(schema['required']) ? (schema['required'] as string[]) : [];
      const model: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [name, prop] of Object.entries(properties)) {
        if (isObject(prop) && 'not' in prop) continue; // a refused field: left to the mutations
        model[name] = fromSchema(doc, isObject(prop) ? prop : {}, depth + 1);
      }
      return fc.record(model, { requiredKeys: required.filter((r) => r in model) });
    }
  }
}

/** JSON-Schema-like values where the text endpoints take a schema (response_format, tool parameters). */
export const schemaLike: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  node: fc.oneof(
    { maxDepth: 4, depthSize: 'small' },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 1 }) },
    {
      weight: 3,
      arbitrary: fc.record(
        {
          type: fc.constantFrom<unknown>('object', 'array', 'string', 'integer', 'number', 'boolean', 'null', ['string', 'null'], 'bogus', 5),
          properties: fc.oneof(fc.dictionary(fc.string({ maxLength: 6 }), tie('node'), { maxKeys: 3 }), fc.jsonValue({ maxDepth: 1 })),
          items: tie('node'),
          minItems: fc.integer({ min: -2, max: 3 }),
          enum: fc.oneof(fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 }), fc.jsonValue({ maxDepth: 1 })),
          const: fc.jsonValue({ maxDepth: 1 }),
          anyOf: fc.array(tie('node'), { maxLength: 2 }),
          minimum: fc.oneof(fc.integer(), fc.string({ maxLength: 3 })),
          maximum: fc.oneof(fc.integer(), fc.string({ maxLength: 3 })),
        },
        { requiredKeys: [] },
      ),
    },
  ),
})).node;
