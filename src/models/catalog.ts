import { derefSchema } from '../contract/index.ts';
import type { JsonSchema, TaskModelSpec } from '../contract/index.ts';
import { ApiError } from '../errors/index.ts';
import type { TextModel } from './text-models.ts';

/**
 * What `GET /v1/models`, `GET /v1/models/{id}` and `GET /v1/pricing` answer: task models as the OpenAPI document
 * states them (their `params_schema` is the very schema `input` is validated against) and the text models.
 * @see reference "Other endpoints"
 */
export function modelList(doc: unknown, taskModels: Map<string, TaskModelSpec>, textModels: TextModel[]): Record<string, unknown> {
  return {
    object: 'list',
    data: [...[...taskModels.values()].map((m) => taskModelView(doc, m, false)), ...textModels.map(textModelView)],
  };
}

export function modelById(
  doc: unknown,
  taskModels: Map<string, TaskModelSpec>,
  textModels: TextModel[],
  id: string,
): Record<string, unknown> {
  const task = taskModels.get(id);
  if (task) return taskModelView(doc, task, true);
  const text = textModels.find((m) => m.id === id);
  if (text) return textModelView(text);
  throw new ApiError('model_unavailable', `Model '${id}' does not exist or is not open to the API.`);
}

export function pricingList(textModels: TextModel[]): Record<string, unknown> {
  return {
    object: 'list',
    data: textModels.map((m) => ({
      model: m.id,
      unit: 'points per million tokens',
      input: m.input_per_million,
      output: m.output_per_million,
    })),
  };
}

function taskModelView(doc: unknown, model: TaskModelSpec, withSchema: boolean): Record<string, unknown> {
  return {
    id: model.id,
    object: 'model',
    kind: 'task',
    capability: model.capability,
    max_processing_seconds: model.maxProcessingSeconds,
    pricing: model.pricing,
    ...(withSchema ? { params_schema: paramsSchema(doc, model.schema) } : {}),
  };
}

function textModelView(model: TextModel): Record<string, unknown> {
  return {
    id: model.id,
    object: 'model',
    kind: 'text',
    capability: model.capability,
    max_processing_seconds: null,
    context_tokens: model.context_tokens,
    max_output_tokens: model.max_output_tokens,
    pricing: { unit: 'points per million tokens', input: model.input_per_million, output: model.output_per_million },
  };
}

/** The model's input schema standing alone: component references inlined, the emulator's own `x-` keys kept. */
function paramsSchema(doc: unknown, schema: JsonSchema): JsonSchema {
  const inline = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(inline);
    if (typeof node !== 'object' || node === null) return node;
    const resolved = derefSchema(doc, node as JsonSchema);
    return Object.fromEntries(Object.entries(resolved).map(([k, v]) => [k, inline(v)]));
  };
  return { $schema: 'https://json-schema.org/draft/2020-12/schema', ...(inline(schema) as JsonSchema) };
}
