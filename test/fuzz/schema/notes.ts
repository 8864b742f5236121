import { isObject } from './document.ts';
import type { OpenApiDocument, Schema } from './document.ts';

/**
 * Cross-field notes the document states in `x-` keywords because no JSON Schema can say them, which a drawn body
 * is made to follow (like the `x-file` test data): `x-must-name-one-of: <list>[].<path>` on a property says a
 * function it names must be among the names at that path of the list (`tool_choice` names one of `tools`).
 * A drawn choice naming something else takes the first listed name, or becomes `auto` when nothing is listed;
 * Ajv checks the result like every other case.
 */
export function followNotes(document: OpenApiDocument, schema: Schema, value: unknown): unknown {
  const resolved = document.follow(schema, '').node;
  if (!isObject(resolved) || !isObject(value) || !isObject(resolved['properties'])) return value;
  let result = value;
  for (const [name, raw] of Object.entries(resolved['properties'])) {
    const note = document.follow(raw, '').node;
    const rule = isObject(note) ? note['x-must-name-one-of'] : undefined;
    if (typeof rule !== 'string' || !isObject(result[name])) continue;
    const [list = '', path = ''] = rule.split('[].');
    const names = (Array.isArray(result[list]) ? (result[list] as unknown[]) : []).map((item) => at(item, path)).filter((n) => typeof n === 'string');
    const choice = result[name];
    const chosen = at(choice, 'function.name');
    if (typeof chosen !== 'string' || names.includes(chosen)) continue;
    result = { ...result, [name]: names.length > 0 ? { ...choice, function: { ...(choice['function'] as object), name: names[0] } } : 'auto' };
  }
  return result;
}

const at = (value: unknown, path: string): unknown =>
  path.split('.').reduce<unknown>((node, key) => (isObject(node) ? node[key] : undefined), value);
