import type { ValidateFunction } from 'ajv';
import { ApiError, invalidParams } from '../errors/index.ts';
import type { ErrorDetail } from '../errors/index.ts';
import { toDetails } from './error-details.ts';
import { normalizeInput } from './normalize.ts';
import type { TaskModelSpec } from './task-models.ts';

export interface TaskSubmission {
  model: TaskModelSpec;
  /** `input` or `params`, as sent: error details name the field the way the caller spelled it. */
  inputName: 'input' | 'params';
  input: Record<string, unknown>;
  webhook_url: string | null;
  metadata: Record<string, string>;
}

/**
 * Checks a submit body against the document: the envelope against SubmitTaskRequest, then the model's input
 * (sent as `input` or `params`) normalized and checked against that model's schema. All problems are reported
 * together, one detail each.
 * @see reference "POST /v1/tasks"
 */
export function checkSubmission(
  doc: unknown,
  envelope: ValidateFunction,
  models: Map<string, TaskModelSpec>,
  body: Record<string, unknown>,
  liftAddressPolicy: boolean,
): TaskSubmission {
  const errors = envelope(body) ? [] : (envelope.errors ?? []);
  // Lifting the policy drops only its https pattern: a callback address must still be a string (a null or a
  // number is not an address, whatever the flags), a URI and within its length.
  const kept = liftAddressPolicy ? errors.filter((e) => !(e.keyword === 'pattern' && isAddressPolicy(e.parentSchema))) : errors;
  const details: ErrorDetail[] = toDetails(kept, '');
  const modelId = body['model'];
  const model = typeof modelId === 'string' ? models.get(modelId) : undefined;
  if (typeof modelId === 'string' && modelId.length > 0 && !model) {
    throw new ApiError('model_unavailable', `Model '${modelId}' does not exist or is not a task model open to the API.`);
  }
  const inputName = Object.hasOwn(body, 'input') ? 'input' : 'params';
  const raw = body[inputName];
  let input: Record<string, unknown> = {};
  if (model && isPlainObject(raw)) {
    input = normalizeInput(doc, model.schema, raw);
    if (!model.validate(input)) details.push(...toDetails(model.validate.errors, inputName));
  }
  if (details.length > 0) throw invalidParams(details);
  if (!model) throw invalidParams([{ field: 'model', message: 'is required' }]);
  return {
    model,
    inputName,
    input,
    webhook_url: typeof body['webhook_url'] === 'string' ? body['webhook_url'] : null,
    // fromEntries defines own properties, so a `__proto__` key stays an ordinary key.
    metadata: isPlainObject(body['metadata'])
      ? (Object.fromEntries(Object.entries(body['metadata'])) as Record<string, string>)
      : {},
  };
}

const isAddressPolicy = (schema: unknown): boolean =>
  isPlainObject(schema) && schema['x-address-policy'] !== undefined;

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
