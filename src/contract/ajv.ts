import { createRequire } from 'node:module';
import type { Ajv2020 } from 'ajv/dist/2020.js';
import type { DocumentName } from './documents.ts';
import type { OpenAPIV3_1 } from 'openapi-types';

/**
 * One Ajv (draft 2020-12, with formats) holding the OpenAPI documents whole, so `#/components/...` references
 * inside them resolve. Non-schema OpenAPI keywords and `x-` annotations are ignored (strict: false): every
 * rule the validator applies is plain JSON Schema, as any other tool reads it.
 */
export function createAjv(
  documents: Partial<Record<DocumentName, OpenAPIV3_1.Document>>,
  useDefaults = false,
  validateSchema = false,
): Ajv2020 {
  // The documents are not checked against the JSON Schema meta-schema at every start (most of the time Ajv
  // would spend): Redocly lints them and test/unit/openapi-schemas.test.ts compiles every schema with checks on.
  const ajv = new (ajvModules().Ajv2020)({ strict: false, allErrors: true, verbose: true, validateFormats: true, useDefaults, validateSchema });
  ajvModules().addFormats(ajv);
  // Padded Base64 (OpenAPI's `byte`). ajv-formats checks it with a regular expression that repeats a group
  // per 4 characters, which overflows the stack on a 70 MB upload; this check is linear.
  ajv.addFormat('byte', { type: 'string', validate: isPaddedBase64 });
  for (const [name, doc] of Object.entries(documents)) ajv.addSchema(doc as object, `${name}.yaml`);
  return ajv;
}

const BASE64_CHARS = /^[A-Za-z0-9+/]*={0,2}$/;

function isPaddedBase64(value: string): boolean {
  return value.length % 4 === 0 && BASE64_CHARS.test(value);
}

interface AjvModules {
  Ajv2020: typeof Ajv2020;
  addFormats: (ajv: Ajv2020) => unknown;
}
let modules: AjvModules | undefined;

/**
 * Ajv, loaded when the first validator is compiled rather than at import: its modules are a sixth of a start,
 * and a start answers its first requests (health, the dashboard) without validating anything.
 */
function ajvModules(): AjvModules {
  if (!modules) {
    const require = createRequire(import.meta.url);
    const formats = require('ajv-formats') as { default: (ajv: Ajv2020) => unknown };
    modules = { Ajv2020: (require('ajv/dist/2020.js') as { Ajv2020: typeof Ajv2020 }).Ajv2020, addFormats: formats.default };
  }
  return modules;
}
