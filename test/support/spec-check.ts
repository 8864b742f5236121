import { fileURLToPath } from 'node:url';
import { getHttpOperationsFromSpec } from '@stoplight/prism-http';
import type { IHttpOperation } from '@stoplight/types';
import prismRouter from '@stoplight/prism-http/dist/router/index.js';
import { validateOutput } from '@stoplight/prism-http/dist/validator/index.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';
import { readFileSync } from 'node:fs';

/**
 * Checks an answer against the OpenAPI document with Prism's own router and response validator, so the
 * document and the code cannot drift apart: the status must be documented for the operation, and the headers
 * and body must match it. Answers to paths the document does not have (unknown paths are 404s the emulator
 * defines) must still be an error body of the document with a request id.
 */
export type DocumentName = 'service' | 'admin';

const documentPath = (name: DocumentName): string =>
  fileURLToPath(new URL(`../../openapi/${name}.yaml`, import.meta.url));

// The router is a CommonJS default export; how it surfaces depends on the loader.
type Route = typeof prismRouter.default;
const route: Route = (prismRouter as unknown as { default?: Route }).default ?? (prismRouter as unknown as Route);

const operations: Record<DocumentName, IHttpOperation[]> = {
  service: await getHttpOperationsFromSpec(documentPath('service')),
  admin: await getHttpOperationsFromSpec(documentPath('admin')),
};

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);
for (const name of ['service', 'admin'] as const) {
  ajv.addSchema(parse(readFileSync(documentPath(name), 'utf8')) as object, `${name}.yaml`);
}

export interface CheckedResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
  text?: string;
  req?: { method?: string; path?: string };
}

/** The problems of one answer, empty when it matches the document. */
export function responseProblems(
  document: DocumentName,
  method: string,
  path: string,
  res: Pick<CheckedResponse, 'status' | 'headers' | 'body'>,
): string[] {
  const pathname = new URL(path, 'http://x').pathname;
  const routed = route({
    resources: operations[document],
    input: { method: method.toLowerCase() as IHttpOperation['method'], url: { path: pathname } },
  } as Parameters<typeof route>[0]);
  const headers = Object.fromEntries(
    Object.entries(res.headers).flatMap(([k, v]) => (v === undefined ? [] : [[k, Array.isArray(v) ? v.join(', ') : v]])),
  );
  if (routed._tag === 'Left') return unroutedProblems(document, pathname, res.status, headers, res.body);
  const operation = routed.right;
  const problems: string[] = [];
  const documented = operation.responses.map((r: { code: string }) => r.code);
  if (!documented.includes(String(res.status)) && !documented.includes('default')) {
    problems.push(`status ${res.status} is not documented for ${operation.method.toUpperCase()} ${operation.path} (has ${documented.join(', ')})`);
  }
  const result = validateOutput({ resource: operation, element: { statusCode: res.status, headers, body: res.body } });
  if (result._tag === 'Left') {
    for (const d of result.left) {
      if (d.severity === 0) problems.push(`${(d.path ?? []).join('.')}: ${d.message}`);
    }
  }
  return problems;
}

function unroutedProblems(
  document: DocumentName,
  pathname: string,
  status: number,
  headers: Record<string, string>,
  body: unknown,
): string[] {
  const problems: string[] = [];
  if (status < 400) problems.push(`${pathname} is not in ${document}.yaml but answered ${status}`);
  if (!/^req_[a-z0-9]{24}$/.test(headers['x-request-id'] ?? '')) problems.push('no X-Request-Id');
  const schema = document === 'service' ? errorSchemaFor(pathname) : 'ErrorBody';
  const validate = ajv.getSchema(`${document}.yaml#/components/schemas/${schema}`);
  if (!validate) return [...problems, `${document}.yaml has no ${schema}`];
  if (!validate(body)) problems.push(...(validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`));
  return problems;
}

function errorSchemaFor(pathname: string): string {
  if (pathname.startsWith('/v1/chat/completions') || pathname.startsWith('/v1/responses')) return 'OpenAIErrorBody';
  if (pathname.startsWith('/v1/messages')) return 'MessagesErrorBody';
  return 'ErrorBody';
}

/** Throws, naming every problem, unless the answer matches the document. */
export function expectResponseMatchesSpec(res: CheckedResponse, document: DocumentName): void {
  const method = res.req?.method ?? 'GET';
  const path = res.req?.path ?? '/';
  const body = res.body !== undefined && !isEmptyObject(res.body) ? res.body : res.text;
  const problems = responseProblems(document, method, path, { status: res.status, headers: res.headers, body });
  if (problems.length > 0) {
    throw new Error(`${method} ${path} → ${res.status} does not match ${document}.yaml:\n  ${problems.join('\n  ')}`);
  }
}

const isEmptyObject = (value: unknown): boolean =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0;
