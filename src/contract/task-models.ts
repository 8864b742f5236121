import type { ValidateFunction } from 'ajv';
import type { Ajv2020 } from 'ajv/dist/2020.js';
import type { OpenAPIV3_1 } from 'openapi-types';
import type { PriceRule } from '../billing/index.ts';
import type { JsonSchema } from './documents.ts';

/** What the OpenAPI document says about one task model, read from the `x-model` input schema. */
export interface TaskModelSpec {
  id: string;
  schemaName: string;
  schema: JsonSchema;
  capability: string;
  output: 'text' | 'video';
  maxProcessingSeconds: number;
  pricing: PriceRule;
  validate: ValidateFunction;
}

export function readTaskModels(doc: OpenAPIV3_1.Document, ajv: Ajv2020): Map<string, TaskModelSpec> {
  const models = new Map<string, TaskModelSpec>();
  for (const [schemaName, raw] of Object.entries(doc.components?.schemas ?? {})) {
    const schema = raw as JsonSchema;
    const id = schema['x-model'];
    if (typeof id !== 'string') continue;
    const validate = ajv.getSchema(`service.yaml#/components/schemas/${schemaName}`);
    if (!validate) throw new Error(`cannot compile ${schemaName}`);
    models.set(id, {
      id,
      schemaName,
      schema,
      capability: String(schema['x-capability'] ?? ''),
      output: schema['x-output'] === 'text' ? 'text' : 'video',
      maxProcessingSeconds: Number(schema['x-max-processing-seconds']),
      pricing: schema['x-pricing'] as PriceRule,
      validate,
    });
  }
  return models;
}
