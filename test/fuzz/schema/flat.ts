import { isDeepStrictEqual } from 'node:util';
import { isObject } from './document.ts';
import type { Schema, SchemaObject } from './document.ts';

/**
 * A schema without its combinators ("flat"): the keywords one alternative of a schema holds, merged from
 * everything that applies to it, so that contradictions show (two consts, a forbidden required property) and
 * the generator knows every bound at once. Sub-schemas of properties and items are kept as lists, unexpanded.
 */
export type JsonType = 'null' | 'boolean' | 'integer' | 'number' | 'string' | 'array' | 'object';
export const ALL_TYPES: readonly JsonType[] = ['null', 'boolean', 'integer', 'number', 'string', 'array', 'object'];

export interface Flat {
  /** null: any type. */
  types: JsonType[] | null;
  /** From `const` and `enum`; null: unrestricted. */
  values: unknown[] | null;
  /** Values a `not` excludes. */
  excluded: unknown[];
  /** Sub-schemas the value must not match (a `not` that could not be pushed down): a filter. */
  negated: Schema[];
  minLength: number;
  maxLength: number | null;
  patterns: string[];
  formats: string[];
  minimum: number | null;
  maximum: number | null;
  exclusiveMinimum: number | null;
  exclusiveMaximum: number | null;
  multipleOf: number[];
  items: Schema[];
  prefixItems: Schema[][];
  minItems: number;
  maxItems: number | null;
  uniqueItems: boolean;
  properties: Map<string, Schema[]>;
  required: Set<string>;
  /** Each `additionalProperties` with the names its own schema declared (it applies to every other name). */
  additional: { declared: Set<string>; patterns: string[]; schema: Schema }[];
  patternProperties: [string, Schema][];
  propertyNames: Schema[];
  minProperties: number;
  maxProperties: number | null;
  examples: unknown[];
  /** `x-` notes the generator reads (see arbitrary.ts). */
  notes: Map<string, unknown>;
}

export const emptyFlat = (): Flat => ({
  types: null,
  values: null,
  excluded: [],
  negated: [],
  minLength: 0,
  maxLength: null,
  patterns: [],
  formats: [],
  minimum: null,
  maximum: null,
  exclusiveMinimum: null,
  exclusiveMaximum: null,
  multipleOf: [],
  items: [],
  prefixItems: [],
  minItems: 0,
  maxItems: null,
  uniqueItems: false,
  properties: new Map(),
  required: new Set(),
  additional: [],
  patternProperties: [],
  propertyNames: [],
  minProperties: 0,
  maxProperties: null,
  examples: [],
  notes: new Map(),
});

/** Keywords that say nothing about validity. */
const ANNOTATIONS = new Set([
  'title', 'description', 'default', 'examples', 'example', 'deprecated', 'readOnly', 'writeOnly', '$comment',
  '$schema', '$id', '$anchor', 'contentEncoding', 'contentMediaType', 'discriminator', 'xml', 'externalDocs',
]);
export const isAnnotation = (key: string): boolean => ANNOTATIONS.has(key) || key.startsWith('x-');

/** The `x-` notes copied onto alternatives; every other `x-` keyword is ignored. */
const READ_NOTES = ['x-file', 'x-address-policy'];

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const maxOf = (a: number | null, b: number | null): number | null => (a === null ? b : b === null ? a : Math.max(a, b));
const minOf = (a: number | null, b: number | null): number | null => (a === null ? b : b === null ? a : Math.min(a, b));

export function typeOfValue(value: unknown): JsonType {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  if (typeof value === 'boolean' || typeof value === 'string') return typeof value as JsonType;
  return 'object';
}

export const typeAllows = (types: readonly JsonType[], t: JsonType): boolean => types.includes(t) || (t === 'integer' && types.includes('number'));

function intersectTypes(a: JsonType[] | null, b: JsonType[] | null): JsonType[] | null {
  if (a === null) return b;
  if (b === null) return a;
  const both = ALL_TYPES.filter((t) => typeAllows(a, t) && typeAllows(b, t));
  // `number` covers `integer`.
  return both.includes('number') ? both.filter((t) => t !== 'integer') : both;
}

/** The own keywords of one schema object (no combinators, no `$ref`). */
export function own(schema: SchemaObject): Flat {
  const f = emptyFlat();
  const type = schema['type'];
  if (typeof type === 'string') f.types = [type as JsonType];
  if (Array.isArray(type)) f.types = type.filter((t): t is JsonType => ALL_TYPES.includes(t as JsonType));
  if ('const' in schema) f.values = [schema['const']];
  const enumValues = schema['enum'];
  if (Array.isArray(enumValues)) f.values = f.values ? f.values.filter((v) => enumValues.some((e: unknown) => isDeepStrictEqual(e, v))) : [...(enumValues as unknown[])];
  f.minLength = num(schema['minLength']) ?? 0;
  f.maxLength = num(schema['maxLength']);
  if (typeof schema['pattern'] === 'string') f.patterns.push(schema['pattern']);
  if (typeof schema['format'] === 'string') f.formats.push(schema['format']);
  f.minimum = num(schema['minimum']);
  f.maximum = num(schema['maximum']);
  // OpenAPI 3.0 spelled exclusiveness as a boolean beside minimum/maximum.
  if (schema['exclusiveMinimum'] === true) [f.exclusiveMinimum, f.minimum] = [f.minimum, null];
  else f.exclusiveMinimum = num(schema['exclusiveMinimum']);
  if (schema['exclusiveMaximum'] === true) [f.exclusiveMaximum, f.maximum] = [f.maximum, null];
  else f.exclusiveMaximum = num(schema['exclusiveMaximum']);
  const multipleOf = num(schema['multipleOf']);
  if (multipleOf !== null && multipleOf > 0) f.multipleOf.push(multipleOf);
  const items = schema['items'];
  if (Array.isArray(items)) f.prefixItems.push(items as Schema[]);
  else if (items !== undefined) f.items.push(items as Schema);
  if (Array.isArray(schema['prefixItems'])) f.prefixItems.push(schema['prefixItems'] as Schema[]);
  f.minItems = num(schema['minItems']) ?? 0;
  f.maxItems = num(schema['maxItems']);
  f.uniqueItems = schema['uniqueItems'] === true;
  const properties = isObject(schema['properties']) ? schema['properties'] : {};
  for (const [name, sub] of Object.entries(properties)) f.properties.set(name, [sub as Schema]);
  if (Array.isArray(schema['required'])) for (const name of schema['required']) if (typeof name === 'string') f.required.add(name);
  const patternProperties = isObject(schema['patternProperties']) ? Object.entries(schema['patternProperties']) : [];
  f.patternProperties = patternProperties.map(([p, s]) => [p, s as Schema]);
  if ('additionalProperties' in schema) {
    f.additional.push({
      declared: new Set(Object.keys(properties)),
      patterns: patternProperties.map(([p]) => p),
      schema: schema['additionalProperties'] as Schema,
    });
  }
  if ('propertyNames' in schema) f.propertyNames.push(schema['propertyNames'] as Schema);
  f.minProperties = num(schema['minProperties']) ?? 0;
  f.maxProperties = num(schema['maxProperties']);
  if (Array.isArray(schema['examples'])) f.examples.push(...(schema['examples'] as unknown[]));
  if ('example' in schema) f.examples.push(schema['example']);
  for (const note of READ_NOTES) if (note in schema) f.notes.set(note, schema[note]);
  return f;
}

/** Both at once, or null when they contradict each other. */
export function merge(a: Flat, b: Flat): Flat | null {
  const values = a.values === null ? b.values : b.values === null ? a.values : a.values.filter((v) => b.values?.some((w) => isDeepStrictEqual(v, w)));
  const properties = new Map(a.properties);
  for (const [name, list] of b.properties) properties.set(name, [...(properties.get(name) ?? []), ...list]);
  const merged: Flat = {
    types: intersectTypes(a.types, b.types),
    values,
    excluded: [...a.excluded, ...b.excluded],
    negated: [...a.negated, ...b.negated],
    minLength: Math.max(a.minLength, b.minLength),
    maxLength: minOf(a.maxLength, b.maxLength),
    patterns: [...a.patterns, ...b.patterns],
    formats: [...a.formats, ...b.formats],
    minimum: maxOf(a.minimum, b.minimum),
    maximum: minOf(a.maximum, b.maximum),
    exclusiveMinimum: maxOf(a.exclusiveMinimum, b.exclusiveMinimum),
    exclusiveMaximum: minOf(a.exclusiveMaximum, b.exclusiveMaximum),
    multipleOf: [...a.multipleOf, ...b.multipleOf],
    items: [...a.items, ...b.items],
    prefixItems: [...a.prefixItems, ...b.prefixItems],
    minItems: Math.max(a.minItems, b.minItems),
    maxItems: minOf(a.maxItems, b.maxItems),
    uniqueItems: a.uniqueItems || b.uniqueItems,
    properties,
    required: new Set([...a.required, ...b.required]),
    additional: [...a.additional, ...b.additional],
    patternProperties: [...a.patternProperties, ...b.patternProperties],
    propertyNames: [...a.propertyNames, ...b.propertyNames],
    minProperties: Math.max(a.minProperties, b.minProperties),
    maxProperties: minOf(a.maxProperties, b.maxProperties),
    examples: [...a.examples, ...b.examples],
    notes: new Map([...a.notes, ...b.notes]),
  };
  return viable(merged);
}

/** The schemas a property of this object must satisfy: its own, the matching patterns', and each `additionalProperties` it falls under. */
export function propertySchemas(flat: Flat, name: string): Schema[] {
  const matches = (pattern: string): boolean => safeRegExp(pattern)?.test(name) ?? false;
  return [
    ...(flat.properties.get(name) ?? []),
    ...flat.patternProperties.filter(([p]) => matches(p)).map(([, s]) => s),
    ...flat.additional.filter((a) => !a.declared.has(name) && !a.patterns.some(matches)).map((a) => a.schema),
  ];
}

export function safeRegExp(pattern: string): RegExp | null {
  try {
    return new RegExp(pattern, 'u');
  } catch {
    return null;
  }
}

/** The flat with the types it cannot have removed, or null when none is left. */
export function viable(flat: Flat): Flat | null {
  const feasible = (t: JsonType): boolean => {
    switch (t) {
      case 'string':
        return flat.maxLength === null || flat.minLength <= flat.maxLength;
      case 'integer':
      case 'number': {
        const lo = maxOf(flat.minimum, flat.exclusiveMinimum);
        const hi = minOf(flat.maximum, flat.exclusiveMaximum);
        if (lo === null || hi === null) return true;
        if (t === 'integer') return Math.ceil(lo) <= Math.floor(hi);
        return lo < hi || (lo === hi && flat.exclusiveMinimum !== lo && flat.exclusiveMaximum !== hi);
      }
      case 'array':
        return (flat.maxItems === null || flat.minItems <= flat.maxItems) && !(flat.minItems > 0 && flat.items.includes(false));
      case 'object':
        if (flat.maxProperties !== null && (flat.minProperties > flat.maxProperties || flat.required.size > flat.maxProperties)) return false;
        return [...flat.required].every((name) => !propertySchemas(flat, name).includes(false));
      default:
        return true;
    }
  };
  const types = (flat.types ?? ALL_TYPES).filter(feasible);
  if (types.length === 0) return null;
  if (flat.types !== null || types.length < ALL_TYPES.length) flat.types = [...types];
  if (flat.values !== null) {
    const allowed = flat.types ?? ALL_TYPES;
    flat.values = flat.values.filter((v) => typeAllows(allowed, typeOfValue(v)) && !flat.excluded.some((e) => isDeepStrictEqual(e, v)));
    if (flat.values.length === 0) return null;
  }
  return flat;
}
