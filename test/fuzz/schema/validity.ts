import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { OpenApiDocument, Schema, SchemaObject } from './document.ts';

/**
 * The judge of "schema-valid": a fresh Ajv (draft 2020-12, with ajv-formats) compiled from the document alone,
 * as any outside tool would compile it. `x-` keywords are unknown keywords here and so ignored (strict off), and
 * `discriminator` is an annotation (Ajv's discriminator option stays off): the `oneOf` it decorates decides.
 * Nothing is shared with the emulator's own validators.
 */
export class Validity {
  private readonly ajv: Ajv2020;
  private readonly compiled = new Map<string, ValidateFunction>();
  private readonly subschemas = new WeakMap<SchemaObject, ValidateFunction>();
  private readonly formats = new Map<string, ValidateFunction>();

  constructor(document: OpenApiDocument) {
    this.ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true });
    addFormats.default(this.ajv);
    this.ajv.addSchema(document.root, 'document');
  }

  /** Whether `value` is valid against the schema at `pointer` in the document. */
  valid(pointer: string, value: unknown): boolean {
    return this.validator(pointer)(value);
  }

  /** Ajv's first complaint, for messages. */
  why(pointer: string, value: unknown): string {
    const validate = this.validator(pointer);
    if (validate(value)) return 'valid';
    const error = validate.errors?.[0];
    return error ? `${error.instancePath || '/'} ${error.message ?? error.keyword}` : 'invalid';
  }

  /** Whether `value` matches a sub-schema of the document (its local references resolved in the document). */
  matches(schema: Schema, value: unknown): boolean {
    if (typeof schema === 'boolean') return schema;
    let validate = this.subschemas.get(schema);
    if (!validate) {
      validate = this.ajv.compile(rebase(schema) as SchemaObject);
      this.subschemas.set(schema, validate);
    }
    return validate(value);
  }

  /** Whether a string is of a format, as Ajv with ajv-formats judges it (an unknown format passes). */
  formatFits(format: string, value: string): boolean {
    let validate = this.formats.get(format);
    if (!validate) {
      validate = this.ajv.compile({ type: 'string', format });
      this.formats.set(format, validate);
    }
    return validate(value);
  }

  private validator(pointer: string): ValidateFunction {
    let validate = this.compiled.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `document#${pointer}` });
      this.compiled.set(pointer, validate);
    }
    return validate;
  }
}

/** A copy whose local `$ref`s point into the document added to Ajv. */
function rebase(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(rebase);
  if (node === null || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node).map(([k, v]) => [k, k === '$ref' && typeof v === 'string' && v.startsWith('#') ? `document${v}` : rebase(v)]),
  );
}
