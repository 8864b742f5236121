import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { Expander } from './expand.ts';
import { ALL_TYPES, propertySchemas, typeOfValue } from './flat.ts';
import type { Flat, JsonType } from './flat.ts';
import type { OpenApiDocument, Schema } from './document.ts';
import { integerArbitrary, numberArbitrary, stringArbitrary, stringFits } from './primitives.ts';
import { publicAsWritten } from './resolved.ts';

/**
 * fast-check arbitraries of the values a JSON Schema (2020-12) allows, drawn from the alternatives expand.ts
 * finds. Values are meant to be valid, not proven valid: the caller checks each one with Ajv (validity.ts) and
 * discards the rest, so the generator may be approximate wherever being exact would be costly.
 *
 * The one `x-` note read here is `x-file` (`{kind, max_bytes, ...}`): it says a file address must name a file
 * uploaded beforehand, of that kind and within those limits, which no schema can say. Such a property takes
 * its values from `fileAddresses(note)` (the caller's uploads, see seed-data.ts), filtered by the property's own
 * schema; without a fitting upload the property is left out (or the alternative dropped when it is required).
 * `x-address-policy: public-https` keeps only addresses whose host is not an internal IP literal or a
 * `localhost` name (judged with ipaddr.js's range names; other names are left to resolve as they will), and
 * `x-must-name-one-of` is followed on whole bodies (notes.ts). Every other `x-` keyword (x-applies-when, ...)
 * is ignored, as an outside tool would ignore it: a rule said only there is a finding when the emulator enforces
 * it, for the document to say it as schema (or for this list to grow, deliberately).
 */
export interface GeneratorHooks {
  fileAddresses?: (note: unknown) => readonly string[];
  /** Whether a value matches a sub-schema (for a `not` the generator cannot push down). */
  matches?: (schema: Schema, value: unknown) => boolean;
  /** Whether a string is of a format (unknown formats pass). */
  formatFits?: (format: string, value: string) => boolean;
}

/** Below this depth, optional properties are left out and arrays kept at their minimum size. */
const DEEP = 6;
/** Beyond this depth nothing more is generated. */
const TOO_DEEP = 16;
/** Extra names on an object that allows them, at most. */
const MAX_EXTRA_PROPERTIES = 3;

export class SchemaArbitraries {
  /** Values a filter inside the generator refused and drew again (whole cases Ajv refuses are counted by the caller). */
  redraws = 0;
  private readonly expander: Expander;

  constructor(
    readonly document: OpenApiDocument,
    private readonly hooks: GeneratorHooks = {},
  ) {
    this.expander = new Expander(document);
  }

  /** Values of a schema, or null when the generator finds none. */
  of(schema: Schema, depth = 0): fc.Arbitrary<unknown> | null {
    return this.ofAll([schema], depth);
  }

  /** Values meeting all these schemas at once. */
  ofAll(schemas: Schema[], depth = 0): fc.Arbitrary<unknown> | null {
    if (depth > TOO_DEEP) return null;
    const arbitraries = this.expander.expandAll(schemas).flatMap((flat) => this.ofFlat(flat, depth) ?? []);
    if (arbitraries.length === 0) return null;
    return arbitraries.length === 1 ? (arbitraries[0] as fc.Arbitrary<unknown>) : fc.oneof(...arbitraries);
  }

  /** The flat alternatives of a schema (the multipart encoder reads them). */
  alternatives(schema: Schema): Flat[] {
    return this.expander.expandAll([schema]);
  }

  /** A filter predicate that counts what it refuses. */
  keep<T>(predicate: (value: T) => boolean): (value: T) => boolean {
    return (value) => {
      if (predicate(value)) return true;
      this.redraws++;
      return false;
    };
  }

  /** A schema with its `$ref`s followed (when it has nothing else to say). */
  resolveSchema(schema: Schema): Schema {
    return this.expander.resolve(schema);
  }

  private ofFlat(flat: Flat, depth: number): fc.Arbitrary<unknown> | null {
    const core = this.core(flat, depth);
    if (!core) return null;
    const base = flat.notes.has('x-address-policy') ? core.filter(this.keep(publicAsWritten)) : core;
    const { excluded, negated } = flat;
    if (excluded.length === 0 && negated.length === 0) return base;
    const matches = this.hooks.matches;
    return base.filter(
      this.keep((v) => !excluded.some((e) => isDeepStrictEqual(e, v)) && !(matches && negated.some((schema) => matches(schema, v)))),
    );
  }

  private core(flat: Flat, depth: number): fc.Arbitrary<unknown> | null {
    if (flat.notes.has('x-file') && this.hooks.fileAddresses) return this.files(flat, this.hooks.fileAddresses(flat.notes.get('x-file')));
    if (flat.values !== null) return fc.constantFrom(...flat.values);
    const types = flat.types ?? inferTypes(flat);
    const arbitraries = types.flatMap((t) => this.ofType(t, flat, depth) ?? []);
    const examples = flat.examples.filter((e) => types.includes(typeOfValue(e)) || (typeOfValue(e) === 'integer' && types.includes('number')));
    if (examples.length > 0 && arbitraries.length > 0) {
      return fc.oneof({ weight: 3, arbitrary: fc.oneof(...arbitraries) }, { weight: 1, arbitrary: fc.constantFrom(...examples) });
    }
    if (arbitraries.length === 0) return null;
    return arbitraries.length === 1 ? (arbitraries[0] as fc.Arbitrary<unknown>) : fc.oneof(...arbitraries);
  }

  private ofType(type: JsonType, flat: Flat, depth: number): fc.Arbitrary<unknown> | null {
    switch (type) {
      case 'null':
        return fc.constant(null);
      case 'boolean':
        return fc.boolean();
      case 'integer':
        return integerArbitrary(flat);
      case 'number':
        return numberArbitrary(flat);
      case 'string':
        return stringArbitrary(flat, this.keep.bind(this), this.hooks.formatFits);
      case 'array':
        return this.array(flat, depth);
      case 'object':
        return this.object(flat, depth);
    }
  }

  /** File addresses from the uploads, as a string or as an array of them, whichever the schema takes. */
  private files(flat: Flat, addresses: readonly string[]): fc.Arbitrary<unknown> | null {
    const types = flat.types ?? ['string', 'array'];
    const fitting = (f: Flat): string[] => addresses.filter((a) => stringFits(f, a));
    if (types.includes('string')) {
      const ok = fitting(flat);
      if (ok.length > 0) return fc.constantFrom(...ok);
    }
    if (!types.includes('array')) return null;
    const itemAlternatives = this.expander.expandAll(flat.items);
    const ok = [...new Set(itemAlternatives.flatMap(fitting))];
    if (ok.length === 0) return flat.minItems === 0 ? fc.constant([]) : null;
    const maxLength = Math.min(flat.maxItems ?? flat.minItems + 3, flat.uniqueItems ? ok.length : Infinity);
    if (maxLength < flat.minItems) return null;
    const item = fc.constantFrom(...ok);
    return flat.uniqueItems
      ? fc.uniqueArray(item, { minLength: flat.minItems, maxLength })
      : fc.array(item, { minLength: flat.minItems, maxLength });
  }

  private array(flat: Flat, depth: number): fc.Arbitrary<unknown[]> | null {
    const prefixLength = Math.max(0, ...flat.prefixItems.map((p) => p.length));
    const prefix: fc.Arbitrary<unknown>[] = [];
    for (let i = 0; i < prefixLength; i++) {
      const schemas = flat.prefixItems.flatMap((p) => (p[i] === undefined ? [] : [p[i] as Schema]));
      const arb = this.ofAll([...schemas], depth + 1);
      if (!arb) {
        if (i < flat.minItems) return null;
        break;
      }
      prefix.push(arb);
    }
    const item = flat.items.length > 0 ? this.ofAll(flat.items, depth + 1) : anyJson(depth);
    const restMin = Math.max(0, flat.minItems - prefix.length);
    const cap = depth >= DEEP ? restMin : restMin + 8;
    const restMax = Math.min(flat.maxItems === null ? cap : flat.maxItems - prefix.length, cap);
    if (restMax < restMin) return null;
    const rest = !item
      ? restMin === 0
        ? fc.constant([] as unknown[])
        : null
      : flat.uniqueItems
        ? fc.uniqueArray(item, { minLength: restMin, maxLength: restMax, selector: canonical })
        : fc.array(item, { minLength: restMin, maxLength: restMax });
    if (!rest) return null;
    return prefix.length === 0 ? rest : fc.tuple(fc.tuple(...prefix), rest).map(([head, tail]) => [...head, ...tail]);
  }

  private object(flat: Flat, depth: number): fc.Arbitrary<Record<string, unknown>> | null {
    const model: Record<string, fc.Arbitrary<unknown>> = {};
    const requiredKeys: string[] = [];
    const names = [...new Set([...flat.properties.keys(), ...flat.required])];
    for (const name of names) {
      const required = flat.required.has(name);
      if (!required && depth >= DEEP) continue;
      const schemas = propertySchemas(flat, name);
      const arb = schemas.includes(false) ? null : schemas.length === 0 ? anyJson(depth + 1) : this.ofAll(schemas, depth + 1);
      if (!arb) {
        if (required) return null;
        continue;
      }
      model[name] = arb;
      if (required) requiredKeys.push(name);
    }
    const record = fc.record(model, { requiredKeys });
    const extras = this.extraProperties(flat, new Set(names), depth);
    const max = flat.maxProperties;
    return fc.tuple(record, extras).map(([declared, extra]) => {
      const result: Record<string, unknown> = { ...extra, ...declared };
      if (max === null) return result;
      // Over maxProperties: drop extra names first, then optional ones.
      for (const key of [...Object.keys(extra), ...Object.keys(declared).filter((k) => !flat.required.has(k))]) {
        if (Object.keys(result).length <= max) break;
        delete result[key];
      }
      return result;
    });
  }

  /** Names the schema does not declare, when it allows them (from `propertyNames`), with values of `additionalProperties`. */
  private extraProperties(flat: Flat, declared: Set<string>, depth: number): fc.Arbitrary<Record<string, unknown>> {
    const none = fc.constant({} as Record<string, unknown>);
    if (depth >= DEEP || flat.additional.some((a) => a.schema === false)) return none;
    const room = Math.min(MAX_EXTRA_PROPERTIES, (flat.maxProperties ?? Infinity) - flat.required.size);
    if (room <= 0) return none;
    const nameArb =
      flat.propertyNames.length > 0
        ? this.ofAll([...flat.propertyNames, { type: 'string' }], depth + 1)
        : fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 16 });
    if (!nameArb) return none;
    const names = (nameArb as fc.Arbitrary<string>).filter((n) => typeof n === 'string' && !declared.has(n));
    const valueOf = (name: string): fc.Arbitrary<unknown> | null => {
      const schemas = propertySchemas(flat, name);
      return schemas.length === 0 ? anyJson(depth + 1) : this.ofAll(schemas, depth + 1);
    };
    const sameForAll = flat.patternProperties.length === 0 ? valueOf('') : null;
    const entries = fc.uniqueArray(names, { minLength: 1, maxLength: room }).chain((keys) =>
      fc.tuple(...keys.map((k) => (sameForAll ?? valueOf(k) ?? fc.constant(undefined)).map((v) => [k, v] as const))),
    );
    const some = entries.map((pairs) => Object.fromEntries(pairs.filter(([, v]) => v !== undefined)));
    if (flat.patternProperties.length === 0 && !sameForAll) return none;
    return fc.oneof({ weight: 3, arbitrary: none }, { weight: 1, arbitrary: some });
  }
}

/** A type-less schema takes the types its keywords speak of, or any type. */
function inferTypes(flat: Flat): JsonType[] {
  const types: JsonType[] = [];
  if (flat.properties.size > 0 || flat.required.size > 0 || flat.additional.length > 0 || flat.maxProperties !== null) types.push('object');
  if (flat.items.length > 0 || flat.prefixItems.length > 0 || flat.maxItems !== null || flat.minItems > 0) types.push('array');
  if (flat.patterns.length > 0 || flat.formats.length > 0 || flat.maxLength !== null || flat.minLength > 0) types.push('string');
  if (flat.minimum !== null || flat.maximum !== null || flat.multipleOf.length > 0) types.push('number');
  return types.length > 0 ? types : [...ALL_TYPES];
}

function anyJson(depth: number): fc.Arbitrary<unknown> {
  return fc.jsonValue({ maxDepth: depth >= DEEP ? 0 : 2 });
}

/** Equal JSON values give equal keys, whatever their key order. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1))) : v,
  );
}
