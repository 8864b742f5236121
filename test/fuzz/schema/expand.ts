import { isObject } from './document.ts';
import type { OpenApiDocument, Schema, SchemaObject } from './document.ts';
import { ALL_TYPES, emptyFlat, isAnnotation, merge, own, typeAllows, viable } from './flat.ts';
import type { Flat } from './flat.ts';

/**
 * JSON Schema (2020-12) combinators turned into alternatives a generator can draw from: `$ref` is followed (its
 * siblings still apply), `allOf` is merged, `anyOf` becomes one alternative per branch and `oneOf` one per
 * branch with the other branches negated (a `discriminator`'s mapping sets the property it names), `if`/`then`/`else` becomes "if and then" or "not if and else", and `not` is pushed down
 * where its shape allows (consts, enums, types, required properties) and kept as a filter elsewhere.
 * Contradictory alternatives (two consts, a required property that is forbidden) are dropped here, which is what
 * keeps the discard rate low. Sub-schemas of properties and items stay unexpanded until they are generated.
 */
export class Expander {
  constructor(
    private readonly document: OpenApiDocument,
    /** Alternatives kept per schema, at most (a product of many `anyOf`s is cut, in order). */
    private readonly limit = 256,
  ) {}

  /** The alternatives of all these schemas at once. */
  expandAll(schemas: Schema[]): Flat[] {
    let alternatives = [emptyFlat()];
    for (const schema of schemas) {
      alternatives = this.product(alternatives, this.expand(schema, 0));
      if (alternatives.length === 0) break;
    }
    return alternatives;
  }

  /** A schema's own object, its `$ref`s followed. */
  resolve(schema: Schema): Schema {
    if (!isObject(schema) || typeof schema['$ref'] !== 'string') return schema;
    const keys = Object.keys(schema).filter((k) => k !== '$ref' && !isAnnotation(k));
    return keys.length === 0 ? this.resolve(this.target(schema['$ref'])) : schema;
  }

  private target(ref: string): Schema {
    const node = this.document.at(ref);
    return typeof node === 'boolean' || isObject(node) ? node : true;
  }

  private expand(schema: Schema, hops: number): Flat[] {
    if (schema === true) return [emptyFlat()];
    if (schema === false || !isObject(schema)) return schema === false ? [] : [emptyFlat()];
    if (hops > 40) return [emptyFlat()];
    const start = viable(own(schema));
    let alternatives = start ? [start] : [];
    const then = (more: Flat[]): void => {
      alternatives = this.product(alternatives, more);
    };
    if (typeof schema['$ref'] === 'string') then(this.expand(this.target(schema['$ref']), hops + 1));
    if (Array.isArray(schema['allOf'])) for (const sub of schema['allOf'] as Schema[]) then(this.expand(sub, hops + 1));
    if (Array.isArray(schema['anyOf'])) then((schema['anyOf'] as Schema[]).flatMap((sub) => this.expand(sub, hops + 1)));
    if (Array.isArray(schema['oneOf'])) then(this.oneOf(schema, hops));
    if ('if' in schema && ('then' in schema || 'else' in schema)) {
      const condition = schema['if'] as Schema;
      const whenTrue = this.product(this.expand(condition, hops + 1), this.expand((schema['then'] ?? true) as Schema, hops + 1));
      const whenFalse = this.product(this.negate(condition, hops + 1), this.expand((schema['else'] ?? true) as Schema, hops + 1));
      then([...whenTrue, ...whenFalse]);
    }
    if ('not' in schema) then(this.negate(schema['not'] as Schema, hops + 1));
    return alternatives;
  }

  /**
   * One alternative per branch, with the other branches negated ("exactly one"); a discriminator's value is
   * set on branches that do not pin it themselves.
   */
  private oneOf(schema: SchemaObject, hops: number): Flat[] {
    const discriminator = isObject(schema['discriminator']) ? schema['discriminator'] : null;
    const property = typeof discriminator?.['propertyName'] === 'string' ? discriminator['propertyName'] : null;
    const mapping = isObject(discriminator?.['mapping']) ? (discriminator['mapping'] as Record<string, unknown>) : {};
    const branches = schema['oneOf'] as Schema[];
    return branches.flatMap((branch, i) => {
      const others = branches.filter((_, j) => j !== i);
      const alternatives = others.reduce((acc, other) => this.product(acc, this.negate(other, hops + 1)), this.expand(branch, hops + 1));
      const ref = isObject(branch) && typeof branch['$ref'] === 'string' ? branch['$ref'] : null;
      if (property === null || ref === null) return alternatives;
      const name = Object.entries(mapping).find(([, target]) => target === ref)?.[0] ?? ref.split('/').pop() ?? '';
      return alternatives.flatMap((alt) => {
        const pinned = (alt.properties.get(property) ?? []).some((s) => {
          const r = this.resolve(s);
          return isObject(r) && ('const' in r || 'enum' in r);
        });
        if (pinned) return [alt];
        const value = emptyFlat();
        value.properties.set(property, [{ const: name }]);
        value.required.add(property);
        const merged = merge(alt, value);
        return merged ? [merged] : [];
      });
    });
  }

  /** Alternatives that together cover "does not match `schema`", as far as its shape allows; a filter otherwise. */
  private negate(schema: Schema, hops: number): Flat[] {
    const resolved = this.resolve(schema);
    if (resolved === true) return [];
    if (resolved === false) return [emptyFlat()];
    if (!isObject(resolved) || hops > 40) return [emptyFlat()];
    const keys = Object.keys(resolved).filter((k) => !isAnnotation(k));
    const only = (...allowed: string[]): boolean => keys.every((k) => allowed.includes(k));
    const flat = (fill: (f: Flat) => void): Flat => {
      const f = emptyFlat();
      fill(f);
      return f;
    };
    if (keys.length === 0) return [];
    if (only('const')) return [flat((f) => f.excluded.push(resolved['const']))];
    if (only('enum') && Array.isArray(resolved['enum'])) return [flat((f) => f.excluded.push(...(resolved['enum'] as unknown[])))];
    if (only('type')) {
      const types = own(resolved).types ?? [];
      const rest = flat((f) => {
        f.types = ALL_TYPES.filter((t) => !typeAllows(types, t));
        // "A number, but not an integer" has no type of its own: integral numbers are filtered out.
        if (types.includes('integer') && !types.includes('number')) f.negated.push({ type: 'integer' });
      });
      return (rest.types ?? []).length > 0 ? [rest] : [];
    }
    if (only('type', 'properties', 'required') && (resolved['type'] === undefined || resolved['type'] === 'object')) {
      // An object fails {properties, required} when a required name is missing or a present property fails its schema.
      const { properties, required } = own(resolved);
      const objectOnly = (fill: (f: Flat) => void): Flat => flat((f) => ((f.types = ['object']), fill(f)));
      return [
        ...(resolved['type'] === 'object' ? [flat((f) => (f.types = ALL_TYPES.filter((t) => t !== 'object')))] : []),
        ...[...required].map((name) => objectOnly((f) => f.properties.set(name, [false]))),
        ...[...properties].map(([name, list]) => objectOnly((f) => (f.required.add(name), f.properties.set(name, list.map((s) => ({ not: s })))))),
      ].flatMap((f) => viable(f) ?? []);
    }
    if (only('not')) return this.expand(resolved['not'] as Schema, hops + 1);
    if (only('anyOf') && Array.isArray(resolved['anyOf'])) {
      return (resolved['anyOf'] as Schema[]).reduce<Flat[]>((acc, sub) => this.product(acc, this.negate(sub, hops + 1)), [emptyFlat()]);
    }
    if (only('allOf') && Array.isArray(resolved['allOf'])) return (resolved['allOf'] as Schema[]).flatMap((sub) => this.negate(sub, hops + 1));
    return [flat((f) => f.negated.push(schema))];
  }

  private product(a: Flat[], b: Flat[]): Flat[] {
    const result: Flat[] = [];
    for (const x of a) {
      for (const y of b) {
        const merged = merge(x, y);
        if (merged) result.push(merged);
        if (result.length >= this.limit) return result;
      }
    }
    return result;
  }
}
