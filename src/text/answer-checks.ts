import type { ValidateFunction } from 'ajv';
import type { Ajv2020 } from 'ajv/dist/2020.js';
import { createAjv } from '../contract/index.ts';
import type { TextBehaviour } from '../scenarios/index.ts';
import type { TextView } from '../text-formats/index.ts';

/**
 * What is wrong with a scenario's fixed answer for the call it answers: a `json` answer that does not fit the
 * request's `response_format` schema, a tool call to a tool the request does not offer or whose arguments do not
 * fit the tool's parameters, an answer that ignores a forced tool. Empty when it fits (or the request says nothing
 * to check it by). The caller logs these, or fails the call in strict mode.
 */
export function answerProblems(view: TextView, behaviour: TextBehaviour): string[] {
  const problems: string[] = [];
  const forced = view.toolChoice === 'required' ? 'a tool call' : typeof view.toolChoice === 'object' ? `a call to ${view.toolChoice.name}` : null;
  if (behaviour.json !== undefined) {
    const { schema, name } = view.responseFormat;
    if (view.responseFormat.type === 'json_schema' && schema) {
      const problem = schemaProblem(schema, behaviour.json);
      if (problem) problems.push(`the json answer does not fit the request's response_format schema${name ? ` '${name}'` : ''}: ${problem}`);
    }
  }
  if (behaviour.tool_calls) {
    const offered = view.tools.map((tool) => tool.name);
    for (const call of behaviour.tool_calls) {
      const tool = view.tools.find((t) => t.name === call.name);
      if (!tool) {
        problems.push(`the tool call to ${call.name}: ${offered.length === 0 ? 'the request offers no tools' : `not among the offered tools (${offered.join(', ')})`}`);
        continue;
      }
      const problem = tool.parameters ? schemaProblem(tool.parameters, call.arguments ?? {}) : null;
      if (problem) problems.push(`the tool call to ${call.name}: its arguments do not fit the tool's parameters: ${problem}`);
    }
    const named = typeof view.toolChoice === 'object' ? view.toolChoice.name : null;
    if (named !== null && !behaviour.tool_calls.some((call) => call.name === named)) problems.push(`the request forces ${forced ?? ''} (tool_choice); the answer calls ${behaviour.tool_calls.map((c) => c.name).join(', ')}`);
  } else if (forced && (behaviour.text !== undefined || behaviour.json !== undefined || behaviour.chunks !== undefined)) {
    problems.push(`the request forces ${forced} (tool_choice); the answer is ${behaviour.json !== undefined ? 'json' : 'text'}`);
  }
  return problems;
}

// Compiled request schemas, by their JSON: an agent loop sends the same tools on every turn. A memo of pure work,
// bounded: when full it starts again with a fresh Ajv (which keeps every schema it compiled). A schema that does
// not compile is remembered as its error.
const MEMO_SIZE = 256;
const compiled = new Map<string, ValidateFunction | string>();
let ajv: Ajv2020 | undefined;

/** The first problems of `value` against a JSON Schema the caller sent, or null when it fits. */
function schemaProblem(schema: Record<string, unknown>, value: unknown): string | null {
  const key = JSON.stringify(schema);
  let validate = compiled.get(key);
  if (validate === undefined) {
    if (compiled.size >= MEMO_SIZE) {
      compiled.clear();
      ajv = undefined;
    }
    // Read as draft 2020-12 whatever it says it is (clients send draft-07's `$schema`), and under no id of its own
    // (two requests' schemas may share one).
    const { $schema: _dialect, $id: _id, ...plain } = schema;
    try {
      validate = (ajv ??= createAjv({})).compile(plain);
    } catch (err) {
      validate = `the schema cannot be checked (${(err as Error).message})`;
    }
    compiled.set(key, validate);
  }
  if (typeof validate === 'string') return validate;
  if (validate(value)) return null;
  return (validate.errors ?? [])
    .slice(0, 3)
    .map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`)
    .join('; ');
}
