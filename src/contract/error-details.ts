import type { ErrorObject } from 'ajv';
import type { ErrorDetail } from '../errors/index.ts';

/**
 * Turns Ajv errors into the reference's `details`: one `{field, message}` per problem, `field` a path such as
 * `input.duration`. Combination rules carry their own wording in `x-message` (and `x-field` where the rule is
 * about a group of fields), read from the schema that failed.
 * @see reference "POST /v1/tasks": Invalid: 422 invalid_params with per-field details
 */
export function toDetails(errors: ErrorObject[] | null | undefined, prefix: string): ErrorDetail[] {
  if (!errors) return [];
  const grouped = errors
    .filter((e) => ruleSchema(e)?.['x-field'] !== undefined && e.keyword === 'anyOf')
    .map((e) => `${e.schemaPath}/`);
  const details: ErrorDetail[] = [];
  for (const error of errors) {
    if (error.keyword === 'if' || error.keyword === 'propertyNames') continue;
    if (grouped.some((path) => error.schemaPath.startsWith(path))) continue;
    const detail = toDetail(error, prefix);
    if (!details.some((d) => d.field === detail.field && d.message === detail.message)) details.push(detail);
  }
  return details;
}

function ruleSchema(error: ErrorObject): Record<string, unknown> | undefined {
  const parent = error.parentSchema;
  return typeof parent === 'object' && parent !== null ? (parent as Record<string, unknown>) : undefined;
}

function toDetail(error: ErrorObject, prefix: string): ErrorDetail {
  const base = joinPath(prefix, error.instancePath);
  const params = error.params as Record<string, unknown>;
  const rule = ruleSchema(error);
  const ruleMessage = typeof rule?.['x-message'] === 'string' ? rule['x-message'] : undefined;
  switch (error.keyword) {
    case 'required':
      return { field: child(base, String(params['missingProperty'])), message: ruleMessage ?? 'is required' };
    case 'anyOf':
      if (typeof rule?.['x-field'] === 'string') {
        return { field: child(base, rule['x-field']), message: ruleMessage ?? 'is invalid' };
      }
      return { field: base, message: error.message ?? 'is invalid' };
    case 'enum':
      return { field: base, message: ruleMessage ?? `must be one of: ${(params['allowedValues'] as unknown[]).join(', ')}` };
    case 'not':
      return { field: base, message: ruleMessage ?? 'is not allowed' };
    // A schema's x-message words the rule it states by these keywords (a blank string, https only, a per-model
    // maximum); a field's other limits keep the validator's wording.
    case 'pattern':
    case 'maximum':
      return { field: base, message: ruleMessage ?? error.message ?? 'is invalid' };
    case 'const':
      return { field: base, message: `must be ${JSON.stringify(params['allowedValue'])}` };
    case 'additionalProperties':
      return { field: child(base, String(params['additionalProperty'])), message: 'is not a known property' };
    default:
      // Ajv reports a bad metadata key on the error itself (errors under `propertyNames`).
      if (typeof error.propertyName === 'string') {
        return { field: `${base}.${error.propertyName}`, message: `key ${error.message ?? 'is invalid'}` };
      }
      return { field: base, message: error.message ?? 'is invalid' };
  }
}

/** `/input/images/0` under prefix `` → `input.images[0]`. */
export function joinPath(prefix: string, instancePath: string): string {
  let out = prefix;
  for (const raw of instancePath.split('/').slice(1)) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    out = /^\d+$/.test(part) ? `${out}[${part}]` : child(out, part);
  }
  return out;
}

const child = (base: string, name: string): string => (base ? `${base}.${name}` : name);
