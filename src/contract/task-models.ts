import type { ValidateFunction } from 'ajv';
import type { Ajv2020 } from 'ajv/dist/2020.js';
import type { OpenAPIV3_1 } from 'openapi-types';
import type { PriceRule } from '../points/index.ts';
import { resolvePointer } from './documents.ts';
import type { JsonSchema } from './documents.ts';

/** What the OpenAPI document says about one task model: its branch of SubmitTaskRequest and its input schema. */
export interface TaskModelSpec {
  id: string;
  schemaName: string;
  schema: JsonSchema;
  capability: string;
  output: 'text' | 'video';
  maxProcessingSeconds: number;
  pricing: PriceRule;
  readonly validate: ValidateFunction;
}

const SCHEMAS = '#/components/schemas/';

/**
 * The task models, read the way a tool reads the document: SubmitTaskRequest's discriminator maps each `model`
 * to its branch, and the branch's `input` names the model's input schema, which carries the price rule and
 * limits in `x-` notes.
 */
export function readTaskModels(doc: OpenAPIV3_1.Document, ajv: () => Ajv2020): Map<string, TaskModelSpec> {
  const submit = resolvePointer(doc, `${SCHEMAS}SubmitTaskRequest`) as { discriminator?: { mapping?: Record<string, string> } };
  const mapping = submit.discriminator?.mapping ?? {};
  const models = new Map<string, TaskModelSpec>();
  for (const [id, branchRef] of Object.entries(mapping)) {
    // The branch's first anyOf entry is the body with `input` (the second, `params`, names the same schema).
    const branch = resolvePointer(doc, branchRef) as { anyOf?: { properties?: { input?: { $ref?: string } } }[] };
    const inputRef = branch.anyOf?.[0]?.properties?.input?.$ref;
    if (!inputRef?.startsWith(SCHEMAS)) throw new Error(`${branchRef}: input must reference a component schema`);
    const schemaName = inputRef.slice(SCHEMAS.length);
    const schema = resolvePointer(doc, inputRef) as JsonSchema;
    let validate: ValidateFunction | undefined;
    models.set(id, {
      id,
      schemaName,
      schema,
      capability: String(schema['x-capability'] ?? ''),
      output: schema['x-output'] === 'text' ? 'text' : 'video',
      maxProcessingSeconds: Number(schema['x-max-processing-seconds']),
      pricing: schema['x-pricing'] as PriceRule,
      // Compiled on the model's first submission, not at start-up.
      get validate(): ValidateFunction {
        validate ??= ajv().getSchema(`service.yaml${inputRef}`);
        if (!validate) throw new Error(`cannot compile ${schemaName}`);
        return validate;
      },
    });
  }
  return models;
}
