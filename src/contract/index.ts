import type { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import type { OpenAPIV3_1 } from 'openapi-types';
import { invalidParams } from '../errors/index.ts';
import { hashOf } from '../cache/index.ts';
import { createAjv } from './ajv.ts';
import { loadDocument } from './documents.ts';
import type { DocumentName } from './documents.ts';
import { toDetails } from './error-details.ts';
import { checkParameters, compileParameters } from './parameters.ts';
import { checkSubmission } from './submit.ts';
import type { TaskSubmission } from './submit.ts';
import { readTaskModels } from './task-models.ts';
import type { TaskModelSpec } from './task-models.ts';

export type { TaskModelSpec } from './task-models.ts';
export type { TaskSubmission } from './submit.ts';
export type { DocumentName, JsonSchema } from './documents.ts';
export { isPlainObject } from './submit.ts';
export { loadDocument, derefSchema, resolvePointer } from './documents.ts';
export { createAjv } from './ajv.ts';
export { readTaskModels } from './task-models.ts';
export { coerceNumbers } from './normalize.ts';
export { parseYaml, yamlModule } from './yaml.ts';

/**
 * The OpenAPI documents, loaded once at start-up and compiled into validators. Handlers ask the contract to
 * check what arrives; they never check shapes by hand. Validators are compiled on first use (Ajv caches them):
 * compiling every schema of both documents would be most of a start's time.
 */
export interface Contract {
  readonly documents: Record<DocumentName, OpenAPIV3_1.Document>;
  readonly taskModels: Map<string, TaskModelSpec>;
  /** Changes whenever either document does: a key for data derived from them. */
  readonly fingerprint: string;
  /** Query, header or path parameters of an operation: coerced, defaulted, or 422 invalid_params. */
  parameters(
    operationId: string,
    location: 'query' | 'header' | 'path',
    raw: Record<string, unknown>,
    document?: DocumentName,
  ): Record<string, unknown>;
  /** A request body against a named component schema, or 422 invalid_params. */
  body<T>(document: DocumentName, schemaName: string, value: unknown): T;
  /**
   * A task submission: envelope, model, normalized input. `liftAddressPolicy` (`--allow-insecure-webhooks`)
   * drops what the schemas marked `x-address-policy` say of addresses (https only), for local receivers.
   */
  submission(body: Record<string, unknown>, options?: { liftAddressPolicy?: boolean }): TaskSubmission;
}

// One per process: the documents ship with the code and never change while it runs, the validators keep no state
// between calls, and compiling them again for every emulator a process starts (tests start hundreds) costs seconds.
let contractMemo: Contract | undefined;
export function createContract(): Contract {
  return (contractMemo ??= buildContract());
}
function buildContract(): Contract {
  const documents = { service: loadDocument('service'), admin: loadDocument('admin') };
  // Task inputs get their defaults from normalization (only where a field applies), so the service document's
  // validators must not add any; the control API's bodies (scenarios) take their defaults from the document.
  let serviceAjv: Ajv2020 | undefined;
  let adminAjv: Ajv2020 | undefined;
  // Built on first use (see createAjv): a start compiles and loads no validator.
  const ajvs: Record<DocumentName, () => Ajv2020> = {
    service: () => (serviceAjv ??= createAjv({ service: documents.service })),
    admin: () => (adminAjv ??= createAjv({ admin: documents.admin }, true)),
  };
  const taskModels = readTaskModels(documents.service, ajvs.service);
  const parameterSets = {
    service: compileParameters('service', documents.service, ajvs.service),
    admin: compileParameters('admin', documents.admin, ajvs.admin),
  };
  const schema = (document: DocumentName, name: string): ValidateFunction => {
    const validate = ajvs[document]().getSchema(`${document}.yaml#/components/schemas/${name}`);
    if (!validate) throw new Error(`${document}.yaml has no schema ${name}`);
    return validate;
  };
  // SubmitTaskRequest is a oneOf by model; the part every branch shares is checked first, then the model's input.
  let envelope: ValidateFunction | undefined;

  return {
    documents,
    taskModels,
    fingerprint: hashOf(JSON.stringify(documents)),
    parameters(operationId, location, raw, document = 'service') {
      const sets = parameterSets[document].get(operationId);
      if (!sets) throw new Error(`${document}.yaml has no operation ${operationId}`);
      return checkParameters(sets()[location], raw);
    },
    body<T>(document: DocumentName, schemaName: string, value: unknown): T {
      const validate = schema(document, schemaName);
      if (!validate(value)) throw invalidParams(toDetails(validate.errors, ''));
      return value as T;
    },
    submission: (body, options = {}) =>
      checkSubmission(documents.service, (envelope ??= schema('service', 'SubmitTaskCommon')), taskModels, body, options.liftAddressPolicy ?? false),
  };
}
export type { FileRecord, Task, TaskFailureCode, TaskOutput, TaskStatus } from './task-shape.ts';
