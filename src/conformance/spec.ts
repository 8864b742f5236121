import type { ValidateFunction } from 'ajv';
import type { Ajv2020 } from 'ajv/dist/2020.js';
import type { OpenAPIV3_1 } from 'openapi-types';
import type { PriceRule } from '../points/index.ts';
import { createAjv, loadDocument, readTaskModels, resolvePointer } from '../contract/index.ts';

interface ResponseSpec {
  headers: { name: string; required: boolean; validate: ValidateFunction }[];
  content: Map<string, ValidateFunction | null>;
}

interface OperationSpec {
  method: string;
  template: string;
  pattern: RegExp;
  responses: Map<string, ResponseSpec>;
}

/** What the generic checks need from the document: per operation, each documented answer's headers and bodies. */
export interface ResponseContract {
  /** Problems of one answer; empty when it matches. Unknown operations are a problem too. */
  problems(method: string, path: string, answer: { status: number; headers: Headers; body: unknown }): string[];
  /** A named component schema, for SSE events and the like. */
  schema(name: string): ValidateFunction;
  /** Each task model's price rule (`x-pricing`), by model code. */
  readonly prices: Readonly<Record<string, PriceRule>>;
}

// One per process, as createContract's: the document is fixed, the validators keep no state between calls.
let memo: ResponseContract | undefined;

/**
 * Compiles the answers of openapi/service.yaml with ajv (a runtime dependency, so the suite ships without dev
 * tools): status documented, content type documented, required headers present and valid, body valid.
 */
export function loadResponseContract(): ResponseContract {
  return (memo ??= buildResponseContract());
}
function buildResponseContract(): ResponseContract {
  const doc = loadDocument('service');
  const ajv: Ajv2020 = createAjv({ service: doc });
  const compile = (schema: unknown): ValidateFunction =>
    ajv.compile(JSON.parse(JSON.stringify(schema ?? {}).replaceAll('"$ref":"#/', '"$ref":"service.yaml#/')) as object);
  const deref = <T>(node: T | OpenAPIV3_1.ReferenceObject): T =>
    typeof node === 'object' && node !== null && '$ref' in node ? (resolvePointer(doc, node.$ref) as T) : (node as T);

  const operations: OperationSpec[] = [];
  for (const [template, item] of Object.entries(doc.paths ?? {})) {
    for (const method of ['get', 'post', 'patch', 'delete'] as const) {
      const op = item?.[method];
      if (!op) continue;
      const responses = new Map<string, ResponseSpec>();
      for (const [status, raw] of Object.entries(op.responses ?? {})) {
        const response = deref<OpenAPIV3_1.ResponseObject>(raw);
        responses.set(status, {
          headers: Object.entries(response.headers ?? {}).map(([name, h]) => {
            const header = deref<OpenAPIV3_1.HeaderObject>(h);
            return { name, required: header.required === true, validate: compile(header.schema) };
          }),
          content: new Map(
            Object.entries(response.content ?? {}).map(([type, media]) => [type, type === 'application/json' ? compile(media.schema) : null]),
          ),
        });
      }
      const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`);
      operations.push({ method: method.toUpperCase(), template, pattern, responses });
    }
  }

  const prices = Object.fromEntries([...readTaskModels(doc, () => ajv).values()].map((m) => [m.id, m.pricing]));
  return {
    prices,
    problems(method, path, answer) {
      const pathname = path.split('?')[0] ?? path;
      const op = operations.find((o) => o.method === method.toUpperCase() && o.pattern.test(pathname));
      if (!op) return [`${method} ${pathname} is not an operation of the document`];
      const response = op.responses.get(String(answer.status));
      if (!response) return [`status ${answer.status} is not documented for ${method} ${op.template} (documented: ${[...op.responses.keys()].join(', ')})`];
      const problems: string[] = [];
      for (const header of response.headers) {
        const value = answer.headers.get(header.name);
        if (value === null) {
          if (header.required) problems.push(`header ${header.name} is missing`);
        } else if (!header.validate(value)) {
          problems.push(`header ${header.name}: ${ajvText(header.validate)}`);
        }
      }
      if (response.content.size > 0) {
        const type = (answer.headers.get('content-type') ?? '').split(';')[0]?.trim() ?? '';
        if (!response.content.has(type)) {
          problems.push(`content type '${type}' is not documented (documented: ${[...response.content.keys()].join(', ')})`);
        } else {
          const validate = response.content.get(type);
          if (validate && !validate(answer.body)) problems.push(`body: ${ajvText(validate)}`);
        }
      }
      return problems;
    },
    schema(name) {
      const validate = ajv.getSchema(`service.yaml#/components/schemas/${name}`);
      if (!validate) throw new Error(`service.yaml has no schema ${name}`);
      return validate;
    },
  };
}

export function ajvText(validate: ValidateFunction): string {
  return (validate.errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message ?? 'is invalid'}`).join('; ');
}
