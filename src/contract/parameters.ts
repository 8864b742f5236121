import type { ValidateFunction } from 'ajv';
import type { Ajv2020 } from 'ajv/dist/2020.js';
import type { OpenAPIV3_1 } from 'openapi-types';
import { invalidParams } from '../errors/index.ts';
import { derefSchema, resolvePointer } from './documents.ts';
import type { DocumentName, JsonSchema } from './documents.ts';
import { toDetails } from './error-details.ts';
import { coerceNumbers } from './normalize.ts';

type Location = 'query' | 'header' | 'path';

interface ParameterSet {
  properties: Record<string, JsonSchema>;
  validate: ValidateFunction;
  /** Header names are matched case-insensitively; errors name them as the document spells them. */
  names: Record<string, string>;
}

/** Validators for each operation's query, header and path parameters, compiled from the document. */
export function compileParameters(
  docName: DocumentName,
  doc: OpenAPIV3_1.Document,
  ajv: () => Ajv2020,
): Map<string, () => Partial<Record<Location, ParameterSet>>> {
  const byOperation = new Map<string, () => Partial<Record<Location, ParameterSet>>>();
  for (const pathItem of Object.values(doc.paths ?? {})) {
    for (const operation of Object.values(pathItem ?? {})) {
      if (typeof operation !== 'object' || operation === null || !('operationId' in operation)) continue;
      const op = operation as OpenAPIV3_1.OperationObject;
      let compiled: Partial<Record<Location, ParameterSet>> | undefined;
      byOperation.set(String(op.operationId), () => (compiled ??= compileOperation(docName, doc, ajv, op)));
    }
  }
  return byOperation;
}

/** One operation's parameter validators, by location. */
function compileOperation(
  docName: DocumentName,
  doc: OpenAPIV3_1.Document,
  ajv: () => Ajv2020,
  op: OpenAPIV3_1.OperationObject,
): Partial<Record<Location, ParameterSet>> {
  const params = (op.parameters ?? []).map((p) =>
    '$ref' in p ? (resolvePointer(doc, p.$ref) as OpenAPIV3_1.ParameterObject) : p,
  );
  const sets: Partial<Record<Location, ParameterSet>> = {};
  for (const location of ['query', 'header', 'path'] as const) {
    const own = params.filter((p) => p.in === location);
    if (own.length === 0) continue;
    const key = (name: string): string => (location === 'header' ? name.toLowerCase() : name);
    const properties = Object.fromEntries(own.map((p) => [key(p.name), derefSchema(doc, p.schema as JsonSchema)]));
    const schema = {
      type: 'object',
      properties,
      required: own.filter((p) => p.required).map((p) => key(p.name)),
    };
    sets[location] = {
      properties,
      validate: ajv().compile(anchorRefs({ ...schema, $id: `${docName}-${op.operationId}-${location}` }, docName)),
      names: Object.fromEntries(own.map((p) => [key(p.name), p.name])),
    };
  }
  return sets;
}

/** Validates and coerces one location's parameters; throws 422 invalid_params naming each bad parameter. */
export function checkParameters(set: ParameterSet | undefined, raw: Record<string, unknown>): Record<string, unknown> {
  if (!set) return {};
  const values: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(set.properties)) {
    const value = raw[name];
    if (value !== undefined) values[name] = coerceNumbers(schema, Array.isArray(value) ? value[0] : value);
  }
  if (!set.validate(values)) {
    const details = toDetails(set.validate.errors, '').map((d) => ({ ...d, field: set.names[d.field] ?? d.field }));
    throw invalidParams(details);
  }
  for (const [name, schema] of Object.entries(set.properties)) {
    if (values[name] === undefined && 'default' in schema) values[name] = schema['default'];
  }
  return values;
}

/** Local `#/…` references inside a standalone schema must point into the document Ajv holds. */
function anchorRefs(schema: JsonSchema, docName: DocumentName): JsonSchema {
  return JSON.parse(JSON.stringify(schema).replaceAll('"$ref":"#/', `"$ref":"${docName}.yaml#/`)) as JsonSchema;
}
