import { readFileSync } from 'node:fs';
import { parseYaml } from './yaml.ts';
import type { OpenAPIV3_1 } from 'openapi-types';
import { derived, hashOf } from '../cache/index.ts';

export type DocumentName = 'service' | 'admin';
export type JsonSchema = Record<string, unknown>;

const OPENAPI_DIR = new URL('../../openapi/', import.meta.url);

/** Reads an OpenAPI document of the package (service.yaml or admin.yaml), parsed once per content. */
export function loadDocument(name: DocumentName): OpenAPIV3_1.Document {
  const text = readFileSync(new URL(`${name}.yaml`, OPENAPI_DIR), 'utf8');
  return derived(`openapi-${name}`, hashOf(text), () => parseYaml(text) as OpenAPIV3_1.Document);
}

/** Follows a local `#/…` reference inside a document. */
export function resolvePointer(doc: unknown, ref: string): unknown {
  if (!ref.startsWith('#/')) throw new Error(`only local references are supported: ${ref}`);
  let node: unknown = doc;
  for (const raw of ref.slice(2).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (typeof node !== 'object' || node === null || !(key in node)) throw new Error(`unresolvable reference ${ref}`);
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/** A schema with a top-level `$ref` merged with its sibling keywords (JSON Schema 2020-12 allows both). */
export function derefSchema(doc: unknown, schema: JsonSchema): JsonSchema {
  const ref = schema['$ref'];
  if (typeof ref !== 'string') return schema;
  const { $ref: _ref, ...siblings } = schema;
  return { ...derefSchema(doc, resolvePointer(doc, ref) as JsonSchema), ...siblings };
}
