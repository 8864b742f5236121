import fc from 'fast-check';
import { expect, it, test } from 'vitest';
import { SchemaArbitraries } from './arbitrary.ts';
import { OpenApiDocument } from './document.ts';
import type { SchemaObject } from './document.ts';
import { Validity } from './validity.ts';

// The generator on one keyword at a time: every value it draws must be valid by Ajv (so nothing is discarded),
// and the values must not all be the same.

const schemas: Record<string, SchemaObject> = {
  constAndEnum: { type: 'object', required: ['a', 'b'], properties: { a: { const: 'x' }, b: { enum: [1, 'two', null] } } },
  typeArrayWithNull: { type: ['integer', 'null'], minimum: 3, maximum: 9 },
  exclusiveAndMultipleOf: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1, multipleOf: 0.25 },
  integerMultipleOf: { type: 'integer', minimum: -100, maximum: 100, multipleOf: 7 },
  patternAndLengths: { type: 'string', pattern: '^[a-c]+-[0-9]{2}$', minLength: 5, maxLength: 8 },
  unanchoredPattern: { type: 'string', pattern: '\\S', maxLength: 20 },
  formats: {
    type: 'object',
    required: ['uri', 'when', 'mail', 'day', 'id', 'bytes'],
    properties: {
      uri: { type: 'string', format: 'uri' },
      when: { type: 'string', format: 'date-time' },
      mail: { type: 'string', format: 'email' },
      day: { type: 'string', format: 'date' },
      id: { type: 'string', format: 'uuid' },
      bytes: { type: 'string', format: 'byte', pattern: '^[A-Za-z0-9+/]*={0,2}$' },
    },
  },
  arrays: { type: 'array', minItems: 2, maxItems: 4, uniqueItems: true, items: { type: 'integer', minimum: 0, maximum: 5 } },
  closedObject: { type: 'object', additionalProperties: false, required: ['a'], properties: { a: { type: 'boolean' }, b: { type: 'string' } } },
  propertyNamesAndMax: {
    type: 'object',
    maxProperties: 2,
    propertyNames: { pattern: '^k[0-9]$' },
    additionalProperties: { type: 'string', maxLength: 3 },
  },
  allOfRefs: { allOf: [{ $ref: '#/components/schemas/named' }, { required: ['extra'], properties: { extra: { type: 'integer' } } }] },
  anyOf: { anyOf: [{ type: 'string', minLength: 3 }, { type: 'array', maxItems: 1 }] },
  oneOfWithDiscriminator: {
    oneOf: [{ $ref: '#/components/schemas/cat' }, { $ref: '#/components/schemas/dog' }],
    discriminator: { propertyName: 'kind', mapping: { cat: '#/components/schemas/cat', dog: '#/components/schemas/dog' } },
  },
  oneOfOverlapping: { oneOf: [{ type: 'integer' }, { type: 'number', minimum: 0 }] },
  ifThenElse: {
    type: 'object',
    required: ['mode'],
    properties: { mode: { enum: ['a', 'b', 'c'] }, x: { type: 'string' }, y: { type: 'integer' } },
    allOf: [
      { if: { properties: { mode: { const: 'a' } }, required: ['mode'] }, then: { required: ['x'] }, else: { properties: { x: false } } },
      { if: { required: ['y'] }, then: { properties: { mode: { const: 'c' } } } },
    ],
  },
  notPushedDown: { type: 'object', properties: { t: { not: {} }, u: { type: 'string', not: { enum: ['', 'a'] } } }, required: ['u'] },
  notAsFilter: { type: 'string', maxLength: 2, not: { pattern: '^a' } },
};

const document = new OpenApiDocument({
  openapi: '3.1.0',
  components: {
    schemas: {
      ...schemas,
      named: { type: 'object', required: ['name'], properties: { name: { type: 'string', minLength: 1 } } },
      cat: { type: 'object', required: ['kind', 'lives'], properties: { kind: { type: 'string' }, lives: { type: 'integer', minimum: 1, maximum: 9 } } },
      dog: { type: 'object', required: ['kind'], properties: { kind: { type: 'string' }, bark: { type: 'boolean' } }, additionalProperties: false },
      upload: {
        type: 'object',
        properties: {
          one: { $ref: '#/components/schemas/address', 'x-file': { kind: 'image' } },
          many: { type: 'array', maxItems: 3, items: { $ref: '#/components/schemas/address' }, 'x-file': { kind: 'video' } },
        },
      },
      address: { type: 'string', pattern: '^(file_[0-9]+|https://\\S+)$' },
    },
  },
});
const validity = new Validity(document);
const arbitraries = (files: Record<string, string[]> = {}): SchemaArbitraries =>
  new SchemaArbitraries(document, {
    fileAddresses: (note) => files[(note as { kind: string }).kind] ?? [],
    matches: (schema, value) => validity.matches(schema, value),
    formatFits: (format, value) => validity.formatFits(format, value),
  });

test.each(Object.keys(schemas))('draws only valid values of %s', (name) => {
  const arb = arbitraries().of({ $ref: `#/components/schemas/${name}` });
  expect(arb).not.toBeNull();
  const values = fc.sample(arb as fc.Arbitrary<unknown>, { numRuns: 200, seed: 42 });
  const invalid = values.filter((v) => !validity.valid(`/components/schemas/${name}`, v));
  expect(invalid.map((v) => `${JSON.stringify(v)}: ${validity.why(`/components/schemas/${name}`, v)}`)).toEqual([]);
  expect(new Set(values.map((v) => JSON.stringify(v))).size).toBeGreaterThan(1);
});

it('takes file parameters from the uploads of their kind, and leaves them out without one', () => {
  const withFiles = arbitraries({ image: ['file_1', 'http://127.0.0.1/files/a.png'], video: ['file_2', 'https://cdn.example.com/v.mp4'] });
  const values = fc.sample(withFiles.of({ $ref: '#/components/schemas/upload' }) as fc.Arbitrary<Record<string, unknown>>, { numRuns: 200, seed: 7 });
  // The http address is not one the schema allows: only the ones that fit are used.
  expect(new Set(values.flatMap((v) => (v['one'] === undefined ? [] : [v['one']])))).toEqual(new Set(['file_1']));
  expect(new Set(values.flatMap((v) => (v['many'] as string[] | undefined) ?? []))).toEqual(new Set(['file_2', 'https://cdn.example.com/v.mp4']));
  const without = fc.sample(arbitraries().of({ $ref: '#/components/schemas/upload' }) as fc.Arbitrary<Record<string, unknown>>, { numRuns: 100, seed: 7 });
  expect(without.every((v) => v['one'] === undefined && ((v['many'] as unknown[] | undefined) ?? []).length === 0)).toBe(true);
});

it('finds nothing to draw for a schema nothing satisfies', () => {
  expect(arbitraries().of({ allOf: [{ const: 1 }, { const: 2 }] })).toBeNull();
  expect(arbitraries().of({ type: 'object', required: ['a'], properties: { a: { not: {} } } })).toBeNull();
});
