import { parseYaml } from '../contract/index.ts';
import { ApiError } from '../errors/index.ts';

/** The YAML media types a route that takes YAML accepts: RFC 9512's, and the older one many tools still send. */
export const YAML_TYPES = ['application/yaml', 'text/yaml'];

/** As for a JSON body: no valid document nests deeper, and an alias can make a YAML document contain itself. */
const MAX_DEPTH = 64;

/**
 * A YAML body, parsed as scenario files are (the same parser), then held to what a JSON body could say: a
 * mapping, with no value JSON has no form for (`!!binary`, `!!set`, `!!timestamp`, an infinite number), nested
 * no deeper than 64 levels. Each problem is 400 bad_request, as a malformed JSON body's is; the schema's checks
 * come after, from the route.
 */
export function parseYamlBody(text: string): Record<string, unknown> {
  let document: unknown;
  try {
    document = parseYaml(text);
  } catch (err) {
    // The parser's message names the line and column, then quotes the text: its first line is enough.
    throw new ApiError('bad_request', `The request body is not valid YAML: ${String((err as Error).message).split('\n')[0]}`);
  }
  if (!isMapping(document)) throw new ApiError('bad_request', 'The request body must be a YAML mapping.');
  const problem = notJson(document, '', 1);
  if (problem !== null) throw new ApiError('bad_request', `The request body ${problem}.`);
  return document;
}

const isMapping = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && Object.getPrototypeOf(value) === Object.prototype;

/** What makes `value` (at `at`, a field path as the API's details write one) no JSON value, or null. */
function notJson(value: unknown, at: string, depth: number): string | null {
  if (depth > MAX_DEPTH) return `nests deeper than ${MAX_DEPTH} levels (at ${at})`;
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return null;
  if (typeof value === 'number') return Number.isFinite(value) ? null : `holds ${value} at ${at}, a number JSON has no form for`;
  let children: [string, unknown][];
  if (Array.isArray(value)) children = value.map((item, i) => [`${at}[${i}]`, item]);
  else if (isMapping(value)) children = Object.entries(value).map(([key, item]) => [at ? `${at}.${key}` : key, item]);
  else return `holds a value JSON has no form for at ${at} (a !!binary, !!set, !!timestamp or other tagged value)`;
  for (const [path, item] of children) {
    const problem = notJson(item, path, depth + 1);
    if (problem !== null) return problem;
  }
  return null;
}
