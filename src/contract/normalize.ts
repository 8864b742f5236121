import { derefSchema } from './documents.ts';
import type { JsonSchema } from './documents.ts';

const NUMERIC = /^\s*-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/;

/**
 * Normalizes a task's input as the reference's submit rules say, reading everything from the model's schema:
 * undefined fields are dropped, numeric strings become numbers, fields that do not apply to the chosen options
 * (`x-applies-when`) are removed, and defaults of the fields that do apply are filled in. Keys follow the
 * schema's order, so equal requests normalize to equal objects. Validation happens afterwards, on the result.
 * @see reference "POST /v1/tasks" rules 2 and "Task object": input
 */
export function normalizeInput(doc: unknown, schema: JsonSchema, raw: Record<string, unknown>): Record<string, unknown> {
  const properties = (schema['properties'] ?? {}) as Record<string, JsonSchema>;
  const fields = Object.entries(properties).map(([name, prop]) => ({ name, schema: derefSchema(doc, prop) }));

  const values = new Map<string, unknown>();
  for (const { name, schema: prop } of fields) {
    if (Object.hasOwn(raw, name)) values.set(name, coerceNumbers(prop, raw[name]));
  }
  // Controlling fields (mode, drive) have no condition of their own: default them first.
  for (const { name, schema: prop } of fields) {
    if (!prop['x-applies-when'] && !values.has(name) && 'default' in prop) values.set(name, prop['default']);
  }
  for (const { name, schema: prop } of fields) {
    const when = prop['x-applies-when'] as Record<string, unknown[]> | undefined;
    if (!when) continue;
    const applies = Object.entries(when).every(([field, allowed]) => allowed.includes(values.get(field)));
    if (!applies) values.delete(name);
    else if (!values.has(name) && 'default' in prop) values.set(name, prop['default']);
  }
  return Object.fromEntries(fields.filter(({ name }) => values.has(name)).map(({ name }) => [name, values.get(name)]));
}

/** Numeric strings become numbers where the schema wants a number or an integer, also inside arrays. */
export function coerceNumbers(schema: JsonSchema, value: unknown): unknown {
  const types = ([] as unknown[]).concat(schema['type'] ?? []);
  if (typeof value === 'string' && (types.includes('integer') || types.includes('number')) && NUMERIC.test(value)) {
    return Number(value);
  }
  if (Array.isArray(value) && types.includes('array') && typeof schema['items'] === 'object') {
    return value.map((item) => coerceNumbers(schema['items'] as JsonSchema, item));
  }
  return value;
}
