import { spawn } from 'node:child_process';
import { createHash, createHmac } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import fc from 'fast-check';
import request from 'supertest';
import type { Response, Test } from 'supertest';
import { parse } from 'yaml';
import { afterAll, expect, it } from 'vitest';
import { ADMIN_TOKEN, DEMO_KEY, socialNote, startEmulator } from '../support/harness.ts';
import type { TestEmulator } from '../support/harness.ts';
import { responseProblems } from '../support/spec-check.ts';
import type { DocumentName } from '../support/spec-check.ts';
import { recordsBesideCalls } from '../support/state.ts';

/**
 * Bad input, fuzzed (issue 9, part 1): every /v1 endpoint and every /_emulator endpoint gets bodies generated
 * from the OpenAPI schemas and then mutated (fields replaced, deleted or added with random JSON, wrong types,
 * out-of-range numbers, huge strings, deep nesting), plus hand-made nasties: invalid UTF-8, 10,000-level
 * nesting, bodies at the 1 MB limit and just over, `__proto__` / `constructor` / `prototype` keys, wrong content
 * types and charsets, duplicate keys, headers at their limits, path traversal in file addresses and path
 * parameters, malformed percent-encodings and case variants of paths.
 *
 * Every answer must: be below 500; carry `X-Request-Id` (`req_` + 24); be an error body in its endpoint group's
 * shape whose `request_id` is that header; match the OpenAPI documents (`responseProblems`); leave the
 * prototypes alone; leave the store serializable, and unchanged when the request was refused (call records and
 * the clock position excepted). Some properties also predict the exact answer (415/400 for content types, 413
 * for sizes, 401 for missing tokens, the signing refusals, 422 for traversal in file addresses).
 *
 * Failures are reproducible: one seed drives every property of a run (printed with the count at the end, and by
 * fast-check with the path of a failure); `FUZZ_SEED=<seed>` replays the run, `FUZZ_SEED=<seed> FUZZ_PATH=<path>`
 * one failure. Crash-class inputs (those that kill the process) run against a child process with a small heap.
 *
 * Part of `npm test` (and so of CI); `npm run fuzz` runs it alone. At the end it prints one plain line,
 * `fuzz: <cases> cases, <failed> failed (seed <seed>)`, and writes the same to test-results/fuzz.json when that
 * directory exists (CI creates it, and prints the count from it).
 */

// ---------------------------------------------------------------------------------------------------------------
// Budget and reproduction

const RUNS = {
  submit: 1200,
  tasksRead: 800,
  files: 800,
  models: 500,
  chat: 1000,
  responses: 650,
  messages: 650,
  contentTypes: 450,
  malformed: 550,
  deep: 220,
  sizes: 100,
  protoKeys: 500,
  bodylessBodies: 300,
  paths: 800,
  signing: 450,
  adminReads: 550,
  adminWrites: 900,
  adminAuth: 300,
  clockSpeed: 150,
  crashes: 120,
  reset: 20,
} as const;
const PLANNED = Object.values(RUNS).reduce((a, b) => a + b, 0);
/** `FUZZ_SCALE=5 npm run fuzz` runs five times as many cases of every property, for a deeper search by hand. */
const SCALE = Number(process.env['FUZZ_SCALE'] ?? 1);
const TIMEOUT = 120_000 * Math.max(1, SCALE);
/** Cases run (property runs and one-off cases) and failed (a property's counterexample, or any other failure of a test). */
const tally = { cases: 0, failed: 0 };

/** One seed for every property of a run, so a run is replayed as a whole from the seed it prints. */
const SEED = process.env['FUZZ_SEED'] ? Number(process.env['FUZZ_SEED']) : Math.floor(Math.random() * 2 ** 31);
const params = <T>(numRuns: number, extra: fc.Parameters<T> = {}): fc.Parameters<T> => ({
  numRuns: Math.max(1, Math.round(numRuns * SCALE)),
  seed: SEED,
  ...(process.env['FUZZ_PATH'] ? { path: process.env['FUZZ_PATH'] } : {}),
  ...extra,
});

/** fc.assert that counts: the runs go to the tally, and a failure throws fast-check's report (seed, path, counterexample). */
async function check<T>(property: fc.IAsyncProperty<T>, parameters: fc.Parameters<T>): Promise<void> {
  const details = await fc.check(property, parameters);
  tally.cases += details.numRuns;
  if (details.failed) throw new Error(fc.defaultReportMessage(details), { cause: details.errorInstance });
}

/** A fuzz test: however it fails (a counterexample, or a setup that broke), that is one failed case. */
function fuzz(name: string, body: () => Promise<void>): void {
  it(
    name,
    async () => {
      try {
        await body();
      } catch (err) {
        tally.failed += 1;
        throw err;
      }
    },
    TIMEOUT,
  );
}

// ---------------------------------------------------------------------------------------------------------------
// The documents, read the way the emulator reads them

type Schema = Record<string, unknown>;
const DOCS: Record<DocumentName, Schema> = {
  service: parse(readFileSync(new URL('../../openapi/service.yaml', import.meta.url), 'utf8')) as Schema,
  admin: parse(readFileSync(new URL('../../openapi/admin.yaml', import.meta.url), 'utf8')) as Schema,
};
const PUBLIC_URL = 'http://127.0.0.1:4010';
const TEXT_MODELS = ['svc-text-pro', 'svc-text-lite'];
const TASK_MODELS = ['social-notes-data', 'video-gen-2.0-fast', 'avatar-photo'];
const V1 = { Authorization: `Bearer ${DEMO_KEY}` };
const ADMIN = { Authorization: `Bearer ${ADMIN_TOKEN}` };

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof RawJson);

function pointer(doc: DocumentName, ref: string): { doc: DocumentName; node: unknown } {
  const [file, path = ''] = ref.split('#');
  const target: DocumentName = !file ? doc : file.includes('service') ? 'service' : 'admin';
  const node = path
    .split('/')
    .slice(1)
    .reduce<unknown>((n, part) => (isObject(n) ? n[part.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined), DOCS[target]);
  return { doc: target, node };
}

function deref(doc: DocumentName, schema: Schema): { doc: DocumentName; schema: Schema } {
  let current = { doc, schema };
  for (let i = 0; i < 10 && typeof current.schema['$ref'] === 'string'; i++) {
    const { doc: d, node } = pointer(current.doc, current.schema['$ref']);
    current = { doc: d, schema: isObject(node) ? node : {} };
  }
  return current;
}

const component = (doc: DocumentName, name: string): Schema => ({ $ref: `${doc}.yaml#/components/schemas/${name}` });

// ---------------------------------------------------------------------------------------------------------------
// Raw JSON: deep nesting and duplicate keys cannot go through JSON.stringify

/** A JSON text to splice in as is. */
class RawJson {
  constructor(readonly text: string) {}
}

function toJsonText(value: unknown): string {
  const raws: string[] = [];
  const text =
    JSON.stringify(value, (_key, v: unknown) => {
      if (v instanceof RawJson) {
        raws.push(v.text);
        return `\u0000raw${raws.length - 1}\u0000`;
      }
      return v;
    }) ?? 'null';
  return raws.length === 0 ? text : text.replace(/"\\u0000raw(\d+)\\u0000"/g, (_m, i: string) => raws[Number(i)] ?? 'null');
}

const deepText = (depth: number, kind: 'array' | 'object' | 'mixed'): string =>
  kind === 'array'
    ? '['.repeat(depth) + ']'.repeat(depth)
    : kind === 'object'
      ? '{"a":'.repeat(depth) + '0' + '}'.repeat(depth)
      : '[{"a":'.repeat(Math.ceil(depth / 2)) + 'null' + '}]'.repeat(Math.ceil(depth / 2));

/** Every endpoint refuses JSON nested deeper than this (400 bad_request; README "Errors"). */
const MAX_BODY_DEPTH = 64;

/** How deep arrays and objects nest in a body as the server parses it (the top-level object is 1), found without recursion. */
function containerDepth(value: unknown): number {
  const parsed: unknown = JSON.parse(toJsonText(value));
  let deepest = 0;
  const stack: [unknown, number][] = [[parsed, 1]];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const [node, depth] = item;
    if (typeof node !== 'object' || node === null) continue;
    deepest = Math.max(deepest, depth);
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  return deepest;
}

const dupObject = (entries: [string, unknown][]): RawJson =>
  new RawJson(`{${entries.map(([k, v]) => `${JSON.stringify(k)}:${toJsonText(v)}`).join(',')}}`);

// ---------------------------------------------------------------------------------------------------------------
// Arbitraries from the schemas

const URIS = ['https://hooks.example.com/cb', 'https://example.com/a.png', 'https://93.184.216.34/x', 'http://example.com/x', 'ftp://x', 'not a uri'];
const clampLength = (n: unknown, fallback: number, cap: number): number => Math.min(typeof n === 'number' ? n : fallback, cap);

/** Values a schema allows (mostly), with its boundaries and a step past them now and then. */
function fromSchema(doc: DocumentName, raw: Schema, depth = 0): fc.Arbitrary<unknown> {
  const { doc: d, schema } = deref(doc, raw);
  if (depth > 6) return fc.constant(null);
  if ('const' in schema) return fc.constant(schema['const']);
  if (Array.isArray(schema['enum']) && schema['enum'].length > 0) {
    return fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...(schema['enum'] as unknown[])) }, { weight: 1, arbitrary: fc.string({ maxLength: 6 }) });
  }
  const variants = (schema['oneOf'] ?? schema['anyOf']) as Schema[] | undefined;
  if (Array.isArray(variants) && schema['type'] === undefined && schema['properties'] === undefined) {
    return fc.oneof(...variants.map((v) => fromSchema(d, v, depth + 1)));
  }
  if ('not' in schema) return fc.jsonValue({ maxDepth: 1 });
  const types = ([] as unknown[]).concat(schema['type'] ?? (schema['properties'] ? 'object' : []));
  if (types.length === 0) return fc.jsonValue({ maxDepth: 2 });
  return fc.oneof(...types.map((type) => forType(d, schema, String(type), depth)));
}

function forType(doc: DocumentName, schema: Schema, type: string, depth: number): fc.Arbitrary<unknown> {
  const num = (v: unknown, fallback: number): number => (typeof v === 'number' ? v : fallback);
  switch (type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer': {
      const min = num(schema['minimum'], -1000);
      const max = num(schema['maximum'], Math.max(min + 1000, 1000));
      return fc.oneof(
        { weight: 6, arbitrary: fc.integer({ min: Math.max(min, -(2 ** 31)), max: Math.min(max, 2 ** 31 - 1) }) },
        { weight: 2, arbitrary: fc.constantFrom(min, max) },
        { weight: 1, arbitrary: fc.constantFrom(min - 1, max + 1, 1.5) },
      );
    }
    case 'number': {
      const min = num(schema['minimum'], num(schema['exclusiveMinimum'], -1e6));
      const max = num(schema['maximum'], 1e6);
      return fc.oneof(
        { weight: 6, arbitrary: fc.double({ min, max, noNaN: true, noDefaultInfinity: true, minExcluded: 'exclusiveMinimum' in schema }) },
        { weight: 1, arbitrary: fc.constantFrom(min, max, min - 1, max + 0.5) },
      );
    }
    case 'string': {
      const maxLength = typeof schema['maxLength'] === 'number' ? schema['maxLength'] : undefined;
      const minLength = typeof schema['minLength'] === 'number' ? schema['minLength'] : 0;
      let base: fc.Arbitrary<string>;
      if (schema['format'] === 'uri') base = fc.constantFrom(...URIS);
      else if (typeof schema['pattern'] === 'string') {
        base = fc.stringMatching(new RegExp(schema['pattern'])).map((s) => (maxLength === undefined ? s : s.slice(0, maxLength)));
      } else base = fc.string({ minLength: Math.min(minLength, 24), maxLength: Math.max(Math.min(minLength, 24), clampLength(maxLength, 24, 24)) });
      if (maxLength === undefined) return base;
      return fc.oneof(
        { weight: 8, arbitrary: base },
        { weight: 1, arbitrary: fc.constantFrom('x'.repeat(maxLength), 'x'.repeat(maxLength + 1), 'é'.repeat(maxLength + 1)) },
      );
    }
    case 'array': {
      const items = isObject(schema['items']) ? fromSchema(doc, schema['items'], depth + 1) : fc.jsonValue({ maxDepth: 1 });
      const minItems = clampLength(schema['minItems'], 0, 3);
      const maxItems = Math.max(minItems, clampLength(schema['maxItems'], 3, 3));
      return fc.array(items, { minLength: minItems, maxLength: maxItems });
    }
    default: {
      const properties = isObject(schema['properties']) ? schema['properties'] : undefined;
      if (!properties) {
        const additional = schema['additionalProperties'];
        if (isObject(additional)) {
          return fc.dictionary(fc.string({ minLength: 1, maxLength: 12 }), fromSchema(doc, additional, depth + 1), { maxKeys: 3 });
        }
        // A free-form object: field names the documents use elsewhere (file records, tasks), values of any type.
        return fc.dictionary(keyArb, fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.constantFrom(...SCALAR_NASTIES)), { maxKeys: 3 });
      }
      const required = Array.isArray(schema['required']) ? (schema['required'] as string[]) : [];
      const model: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [name, prop] of Object.entries(properties)) {
        if (isObject(prop) && 'not' in prop) continue; // a refused field: left to the mutations
        model[name] = fromSchema(doc, isObject(prop) ? prop : {}, depth + 1);
      }
      return fc.record(model, { requiredKeys: required.filter((r) => r in model) });
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Mutations of valid bodies

const PROTO_KEYS = ['__proto__', 'constructor', 'prototype'] as const;
const keyArb = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      ...PROTO_KEYS,
      'toString', 'hasOwnProperty', 'valueOf', '', ' ', 'model', 'input', 'params', 'metadata', 'webhook_url',
      'stream', 'tools', 'tool_choice', 'previous_response_id', 'n', 'max_tokens', 'emulator_scenario', 'mode',
      'agree', 'seconds', 'points', 'output', 'files', 'usage', 'code', 'url', 'size', 'type', 'expires_at',
      'mime_type', 'duration', 'content', 'scenarios', 'name', 'outcome', 'concurrency', 'signing', 'quota',
      'width', 'height', 'cover_url', 'text', 'status', 'id',
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 10 }) },
);

const PROTO_VALUES: unknown[] = [
  JSON.parse('{"__proto__":{"polluted":"yes"}}'),
  { constructor: { prototype: { polluted: 'yes' } } },
  JSON.parse('{"__proto__":{"toString":"polluted","isAdmin":true}}'),
  { prototype: { polluted: 'yes' } },
];

const SCALAR_NASTIES: unknown[] = [
  null, true, false, 0, -0, -1, 1, 1.5, -0.5, 4, 15, 16, 101, 2 ** 31, 2 ** 53 + 2, -(2 ** 53), 1e21, 1e308, -1e308,
  5e-324, '', ' ', '0', '1', '-1', '1e3', '0x10', 'NaN', 'Infinity', 'true', 'null', '\u0000', '\ud800', '\udfff',
  'é', '👍', 'x\r\nInjected: 1', '<script>alert(1)</script>', '../../etc/passwd', '%00', 'file_../../etc/passwd',
  `${PUBLIC_URL}/files/../../package.json`, [], {}, [[]], [null], { '': '' },
];

const nastyValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 5, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 5, arbitrary: fc.constantFrom(...SCALAR_NASTIES) },
  { weight: 1, arbitrary: fc.integer({ min: 2, max: 5 }).map((n) => 'x'.repeat(10 ** n)) },
  { weight: 1, arbitrary: fc.integer({ min: 2, max: 4 }).map((n) => new Array<number>(10 ** n).fill(0)) },
  { weight: 1, arbitrary: fc.constantFrom(...PROTO_VALUES) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom(50, 1000, 10_000), fc.constantFrom('array', 'object', 'mixed') as fc.Arbitrary<'array' | 'object' | 'mixed'>)
      .map(([depth, kind]) => new RawJson(deepText(depth, kind))),
  },
);

interface Mutation {
  path: number[];
  op: 'set' | 'delete' | 'add' | 'wrap' | 'stringify';
  key: string;
  pick: number;
  value: unknown;
}
const mutationArb: fc.Arbitrary<Mutation> = fc.record({
  path: fc.array(fc.nat(), { maxLength: 4 }),
  op: fc.constantFrom('set', 'set', 'delete', 'add', 'add', 'wrap', 'stringify') as fc.Arbitrary<Mutation['op']>,
  key: keyArb,
  pick: fc.nat(),
  value: nastyValue,
});

const childKeys = (v: unknown): (string | number)[] =>
  Array.isArray(v) ? v.map((_x, i) => i) : isObject(v) ? Object.keys(v) : [];
const childOf = (v: unknown, k: string | number): unknown =>
  Array.isArray(v) ? v[k as number] : isObject(v) ? v[k as string] : undefined;
/** Rebuilt with Object.fromEntries, so `__proto__` stays an ordinary own key. */
const withChild = (v: unknown, k: string | number, child: unknown): unknown =>
  Array.isArray(v)
    ? v.map((x, i) => (i === k ? child : x))
    : Object.fromEntries([...Object.entries(v as Record<string, unknown>).filter(([kk]) => kk !== k), [k, child]]);
const withoutChild = (v: unknown, k: string | number): unknown =>
  Array.isArray(v) ? v.filter((_x, i) => i !== k) : Object.fromEntries(Object.entries(v as Record<string, unknown>).filter(([kk]) => kk !== k));

function mutate(node: unknown, path: number[], m: Mutation): unknown {
  const keys = childKeys(node);
  const [step, ...rest] = path;
  if (step !== undefined && keys.length > 0) {
    const k = keys[step % keys.length] as string | number;
    return withChild(node, k, mutate(childOf(node, k), rest, m));
  }
  switch (m.op) {
    case 'set':
      return m.value;
    case 'wrap':
      return [node];
    case 'stringify':
      return typeof node === 'string' ? node : toJsonText(node);
    case 'delete':
      return keys.length > 0 ? withoutChild(node, keys[m.pick % keys.length] as string | number) : undefined;
    case 'add':
      return isObject(node) ? withChild(node, m.key, m.value) : Array.isArray(node) ? [...node, m.value] : m.value;
  }
}

/** A valid body, then zero to three mutations. */
const mutated = (base: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> =>
  fc.tuple(base, fc.array(mutationArb, { maxLength: 3 })).map(([b, ms]) => ms.reduce((v, m) => mutate(v, m.path, m), b));

/** Replaces `model` with a served one most of the time. */
const withModel = (arb: fc.Arbitrary<unknown>, models: string[]): fc.Arbitrary<unknown> =>
  fc
    .tuple(arb, fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...models) }, { weight: 1, arbitrary: fc.string({ maxLength: 8 }) }))
    .map(([b, model]) => (isObject(b) ? { ...b, model } : b));

/** JSON-Schema-like values where the text endpoints take a schema (response_format, tool parameters). */
const schemaLike: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  node: fc.oneof(
    { maxDepth: 4, depthSize: 'small' },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 1 }) },
    {
      weight: 3,
      arbitrary: fc.record(
        {
          type: fc.constantFrom<unknown>('object', 'array', 'string', 'integer', 'number', 'boolean', 'null', ['string', 'null'], 'bogus', 5),
          properties: fc.oneof(fc.dictionary(fc.string({ maxLength: 6 }), tie('node'), { maxKeys: 3 }), fc.jsonValue({ maxDepth: 1 })),
          items: tie('node'),
          minItems: fc.integer({ min: -2, max: 3 }),
          enum: fc.oneof(fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 }), fc.jsonValue({ maxDepth: 1 })),
          const: fc.jsonValue({ maxDepth: 1 }),
          anyOf: fc.array(tie('node'), { maxLength: 2 }),
          minimum: fc.oneof(fc.integer(), fc.string({ maxLength: 3 })),
          maximum: fc.oneof(fc.integer(), fc.string({ maxLength: 3 })),
        },
        { requiredKeys: [] },
      ),
    },
  ),
})).node;

// ---------------------------------------------------------------------------------------------------------------
// Requests and what every answer must satisfy

type Verb = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
type Body =
  | { kind: 'json'; value: unknown; contentType?: string }
  | { kind: 'raw'; bytes: Buffer | string; contentType: string | null; encoding?: string }
  | { kind: 'multipart'; fields: [string, string][]; files: { field: string; bytes: Buffer; filename: string; contentType: string }[] };

interface Case {
  method: Verb;
  path: string;
  headers: Record<string, string>;
  body?: Body;
  /** Further expectations of this case; each string is a problem. */
  expect?: (res: Response) => string[];
}

type Group = 'general' | 'openai' | 'messages';
const pathnameOf = (path: string): string => path.split('?')[0] ?? path;
/** The endpoint group of a path, as the documents name paths: exactly (a case variant is an unknown path). */
function groupOf(path: string): Group {
  const p = pathnameOf(path);
  if (p.startsWith('/v1/chat/completions') || p.startsWith('/v1/responses')) return 'openai';
  if (p.startsWith('/v1/messages')) return 'messages';
  return 'general';
}
const docOf = (path: string): DocumentName => (pathnameOf(path).startsWith('/_emulator') ? 'admin' : 'service');
const isFilesPath = (path: string): boolean => pathnameOf(path).startsWith('/files/');

function errorOf(body: unknown): Record<string, unknown> | undefined {
  return isObject(body) && isObject(body['error']) ? body['error'] : undefined;
}
const codeOf = (res: Response): unknown => errorOf(res.body)?.['code'];

function shapeProblems(group: Group, body: unknown, requestId: string): string[] {
  const error = errorOf(body);
  if (!error) return [`error body has no error object: ${excerpt(body)}`];
  const problems: string[] = [];
  const want = (name: string, ok: boolean): void => void (ok || problems.push(`error.${name} is wrong: ${JSON.stringify(error[name])}`));
  want('message', typeof error['message'] === 'string');
  want('code', typeof error['code'] === 'string');
  want('request_id', error['request_id'] === requestId);
  if (group === 'openai') {
    want('type', typeof error['type'] === 'string');
    want('param', error['param'] === null || typeof error['param'] === 'string');
  }
  if (group === 'messages') {
    want('type', typeof error['type'] === 'string');
    if ((body as Record<string, unknown>)['type'] !== 'error') problems.push(`body.type is ${JSON.stringify((body as Record<string, unknown>)['type'])}, not "error" (messages shape)`);
  }
  if (group !== 'openai' && 'param' in error) problems.push(`error.param in the ${group} shape (an openai-shaped body?)`);
  if (group !== 'messages' && 'type' in (body as object)) problems.push(`top-level type in the ${group} shape (a messages-shaped body?)`);
  return problems;
}

const PROTOTYPES: [string, object][] = [
  ['Object', Object.prototype],
  ['Array', Array.prototype],
  ['Function', Function.prototype],
  ['String', String.prototype],
  ['Number', Number.prototype],
];
const prototypeState = (): Map<string, unknown> =>
  new Map(
    PROTOTYPES.flatMap(([name, proto]) =>
      Reflect.ownKeys(proto).map((k) => [`${name}.${String(k)}`, Object.getOwnPropertyDescriptor(proto, k)?.value] as [string, unknown]),
    ),
  );
const PROTOTYPE_BASELINE = prototypeState();

/** What changed on the built-in prototypes; restores them so later cases start clean. */
function pollution(): string | null {
  const now = prototypeState();
  const changed = [...now.keys()].filter((k) => !PROTOTYPE_BASELINE.has(k) || PROTOTYPE_BASELINE.get(k) !== now.get(k));
  const empty: Record<string, unknown> = {};
  if (changed.length === 0 && empty['polluted'] === undefined && empty['isAdmin'] === undefined) return null;
  for (const [name, proto] of PROTOTYPES) {
    for (const k of Reflect.ownKeys(proto)) {
      const id = `${name}.${String(k)}`;
      if (!PROTOTYPE_BASELINE.has(id)) Reflect.deleteProperty(proto, k);
      else if (PROTOTYPE_BASELINE.get(id) !== now.get(id)) Reflect.set(proto, k, PROTOTYPE_BASELINE.get(id));
    }
  }
  return `prototype pollution: ${changed.join(', ') || 'polluted'}`;
}

function excerpt(value: unknown, max = 300): string {
  let text: string;
  try {
    text = typeof value === 'string' ? value : Buffer.isBuffer(value) ? `<${value.length} bytes>` : (JSON.stringify(value) ?? String(value));
  } catch {
    text = '<unserializable>';
  }
  return text.length > max ? `${text.slice(0, max)}…(${text.length} chars)` : text;
}

function describeCase(c: Case): string {
  const body = !c.body
    ? 'no body'
    : c.body.kind === 'json'
      ? `${c.body.contentType ?? 'application/json'} ${excerpt(toJsonText(c.body.value))}`
      : c.body.kind === 'raw'
        ? `${c.body.contentType ?? '(no content type)'}${c.body.encoding ? ` (${c.body.encoding})` : ''} ${excerpt(Buffer.isBuffer(c.body.bytes) ? c.body.bytes.toString('latin1') : c.body.bytes)}`
        : `multipart fields=${excerpt(c.body.fields)} files=${excerpt(c.body.files.map((f) => ({ ...f, bytes: f.bytes.length })))}`;
  return `${c.method} ${excerpt(c.path, 200)} headers=${excerpt(c.headers, 200)} body=${body}`;
}

function open(app: TestEmulator['emulator']['app'], method: Verb, path: string): Test {
  const agent = request(servers.get(app) ?? app);
  switch (method) {
    case 'GET':
      return agent.get(path);
    case 'POST':
      return agent.post(path);
    case 'PATCH':
      return agent.patch(path);
    case 'PUT':
      return agent.put(path);
    case 'DELETE':
      return agent.delete(path);
  }
}

function build(app: TestEmulator['emulator']['app'], c: Case): Test {
  const test = open(app, c.method, c.path).set(c.headers);
  const body = c.body;
  if (!body) return test;
  switch (body.kind) {
    case 'json':
      return test.set('Content-Type', body.contentType ?? 'application/json').send(toJsonText(body.value));
    case 'raw': {
      if (body.contentType !== null) test.set('Content-Type', body.contentType);
      if (body.encoding) test.set('Content-Encoding', body.encoding);
      // The bytes as they are: superagent would otherwise serialize a Buffer sent as JSON into {"type":"Buffer",...}.
      return test.serialize((data: unknown) => data as string).send(Buffer.isBuffer(body.bytes) ? body.bytes : Buffer.from(body.bytes, 'utf8'));
    }
    case 'multipart': {
      for (const [name, value] of body.fields) test.field(name, value);
      for (const f of body.files) test.attach(f.field, f.bytes, { filename: f.filename, contentType: f.contentType });
      return test;
    }
  }
}

/** The store as the brief compares it: call records and the clock position left out; null when it cannot be written. */
function storeSnapshot(t: TestEmulator): string | null {
  try {
    // The plain data (the same objects, without the file store's change tracking): several times faster to write.
    return recordsBesideCalls(t.emulator);
  } catch {
    return null;
  }
}

function firstDifference(a: string, b: string): string {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return `at ${i}: before …${a.slice(Math.max(0, i - 80), i + 80)}… after …${b.slice(Math.max(0, i - 80), i + 80)}…`;
}

/** One listening server per emulator: supertest would otherwise open and close a server for every request. */
const servers = new Map<unknown, Server>();

interface World {
  t: TestEmulator;
  /** Unexpected errors the emulator logged during the current case (stack traces of 500s). */
  logs: string[];
  /** A rich account (points never run out) and its key. */
  accountA: string;
  keyA: string;
  /** A second account and its key. */
  accountB: string;
  keyB: string;
  ownTasks: string[];
  foreignTask: string;
  ownFile: { id: string; name: string };
  foreignFile: { id: string; name: string };
  deliveryId: string;
  requestId: string;
}

/** Sends one case and checks every rule that holds for every answer; returns the answer for more checks. */
async function exchange(w: World, c: Case): Promise<Response> {
  const before = storeSnapshot(w.t);
  // An earlier case left the store unserializable and failed for it; while shrinking, nothing later can say more.
  fc.pre(before !== null);
  w.logs.length = 0;
  let res: Response;
  try {
    res = await build(w.t.emulator.app, c);
  } catch (err) {
    throw new Error(`${describeCase(c)}\n→ no answer: ${String(err)}`);
  }
  const problems: string[] = [];
  const id = String(res.headers['x-request-id'] ?? '');
  if (res.status >= 500) problems.push(`status ${res.status}`);
  if (!/^req_[a-z0-9]{24}$/.test(id)) problems.push(`X-Request-Id is ${JSON.stringify(res.headers['x-request-id'])}`);
  const group = groupOf(c.path);
  if (group === 'messages' && res.headers['request-id'] !== id) problems.push('no request-id header equal to X-Request-Id (messages-style)');
  if (res.status >= 400) {
    if (!String(res.headers['content-type'] ?? '').startsWith('application/json')) problems.push(`error content type ${String(res.headers['content-type'])}`);
    problems.push(...shapeProblems(group, res.body, id));
  }
  if (!(isFilesPath(c.path) && res.status === 200)) {
    const body = res.body !== undefined && !(isObject(res.body) && Object.keys(res.body).length === 0) ? res.body : res.text;
    problems.push(...responseProblems(docOf(c.path), c.method, c.path, { status: res.status, headers: res.headers, body }));
  }
  const polluted = pollution();
  if (polluted) problems.push(polluted);
  const after = storeSnapshot(w.t);
  if (after === null) problems.push('the store can no longer be serialized (JSON.stringify throws): a file store could not be written again');
  else if (res.status >= 400 && after !== before) problems.push(`a refused request changed the store ${firstDifference(before ?? '', after)}`);
  if (problems.length === 0 && c.expect) problems.push(...c.expect(res));
  if (problems.length > 0) {
    const log = w.logs[0] ? `\n  emulator log: ${w.logs[0].slice(0, 600)}` : '';
    throw new Error(`${describeCase(c)}\n→ ${res.status} ${excerpt(res.body && Object.keys(res.body).length > 0 ? res.body : res.text)}\n  - ${problems.join('\n  - ')}${log}`);
  }
  return res;
}

/** A one-off case outside the properties, counted like a property run. */
function once(w: World, c: Case): Promise<Response> {
  tally.cases += 1;
  return exchange(w, c);
}

const expectStatus =
  (...statuses: number[]) =>
  (res: Response): string[] =>
    statuses.includes(res.status) ? [] : [`expected ${statuses.join(' or ')}, got ${res.status} ${String(codeOf(res) ?? '')}`];
const expectError =
  (status: number, code: string) =>
  (res: Response): string[] =>
    res.status === status && codeOf(res) === code ? [] : [`expected ${status} ${code}, got ${res.status} ${String(codeOf(res) ?? '')}`];
const expectNot =
  (status: number) =>
  (res: Response): string[] =>
    res.status !== status ? [] : [`did not expect ${status} (${String(codeOf(res) ?? '')})`];

// ---------------------------------------------------------------------------------------------------------------
// A world per property: an emulator of its own (in memory, manual clock, no DNS, no network) with ids to aim at

async function call(t: TestEmulator, method: Verb, path: string, headers: Record<string, string>, body?: unknown): Promise<Response> {
  const test = open(t.emulator.app, method, path).set(headers);
  const res = await (body === undefined ? test : test.send(body as object));
  if (res.status >= 300) throw new Error(`setup ${method} ${path} → ${res.status} ${res.text}`);
  return res;
}

async function world(options: { signing?: boolean } = {}): Promise<World & { signingKey?: { key: string; secret: string } }> {
  const logs: string[] = [];
  const t = await startEmulator({
    publicUrl: PUBLIC_URL,
    log: (message) => void logs.push(message),
    resolveHost: () => Promise.resolve([]),
    send: () => Promise.resolve({ status: 200, excerpt: 'ok' }),
  });
  await t.emulator.listen(0);
  if (t.emulator.server) servers.set(t.emulator.app, t.emulator.server);
  const a = (await call(t, 'POST', '/_emulator/accounts', ADMIN, { points: '999999999999.000' })).body as { id: string };
  const keyA = ((await call(t, 'POST', `/_emulator/accounts/${a.id}/keys`, ADMIN, {})).body as { key: string }).key;
  const b = (await call(t, 'POST', '/_emulator/accounts', ADMIN, {})).body as { id: string };
  const keyB = ((await call(t, 'POST', `/_emulator/accounts/${b.id}/keys`, ADMIN, {})).body as { key: string }).key;
  await call(t, 'POST', `/_emulator/accounts/${a.id}/webhook`, ADMIN, { url: 'https://hooks.example.com/a' });
  const asA = { Authorization: `Bearer ${keyA}` };
  const ownTasks: string[] = [];
  for (let i = 0; i < 4; i++) ownTasks.push(((await call(t, 'POST', '/v1/tasks', asA, socialNote())).body as { id: string }).id);
  const foreign = await call(t, 'POST', '/v1/tasks', { Authorization: `Bearer ${keyB}` }, socialNote());
  const upload = { content: Buffer.from('not really a picture').toString('base64'), filename: 'a.png' };
  const fileOf = (res: Response) => {
    const body = res.body as { id: string; url: string };
    return { id: body.id, name: body.url.slice(body.url.lastIndexOf('/') + 1) };
  };
  const ownFile = fileOf(await call(t, 'POST', '/v1/files', asA, upload));
  const foreignFile = fileOf(await call(t, 'POST', '/v1/files', { Authorization: `Bearer ${keyB}` }, upload));
  // One finished task, so a callback message exists to resend.
  await call(t, 'POST', `/_emulator/tasks/${ownTasks[3] ?? ''}/complete`, ADMIN, {});
  await call(t, 'POST', '/_emulator/clock/advance', ADMIN, { seconds: 0 });
  const deliveries = (await call(t, 'GET', '/_emulator/webhooks/deliveries', ADMIN)).body as { data: { id: string }[] };
  let signingKey: { key: string; secret: string } | undefined;
  if (options.signing) {
    const created = (await call(t, 'POST', `/_emulator/accounts/${a.id}/keys`, ADMIN, { signing: true })).body as { key: string; signing_secret: string };
    signingKey = { key: created.key, secret: created.signing_secret };
  }
  return {
    t,
    logs,
    accountA: a.id,
    keyA,
    accountB: b.id,
    keyB,
    ownTasks,
    foreignTask: (foreign.body as { id: string }).id,
    ownFile,
    foreignFile,
    deliveryId: deliveries.data[0]?.id ?? 'msg_none',
    requestId: String(foreign.headers['x-request-id']),
    ...(signingKey ? { signingKey } : {}),
  };
}

async function closeWorld(w: World): Promise<void> {
  servers.delete(w.t.emulator.app);
  await w.t.close();
}

async function withWorld<T>(run: (w: World) => Promise<T>): Promise<T> {
  const w = await world();
  try {
    return await run(w);
  } finally {
    await closeWorld(w);
  }
}

const asA = (w: World): Record<string, string> => ({ Authorization: `Bearer ${w.keyA}` });

// ---------------------------------------------------------------------------------------------------------------
// Shared pieces of cases

/** Path segments that must never reach a file, a task or a record they do not name. */
const NASTY_IDS = [
  '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', '..', '.', '...', '..%2F..%2Fetc%2Fpasswd',
  '%2e%2e%2f%2e%2e%2fpackage.json', '..%5C..%5Cpackage.json', '%2E%2E', '%00', '%0d%0aX-Injected:%201',
  'file_..%2F..%2Fetc%2Fpasswd', '%E0%A4%A', '%', '%ZZ', '%FF', '%C0%AF', '%ED%A0%80', 'T261123090000AAAAAA',
  `T${'9'.repeat(200)}`, 'a'.repeat(5000), encodeURIComponent('日本語'), encodeURIComponent('é'), '%20', '+', 'null',
  'undefined', '-1', '0', '1e3', 'acct_demo%00', 'sk-emulator-demo%20',
];
const nastyId = fc.constantFrom(...NASTY_IDS);

const NASTY_QUERY = ['', '0', '-1', '1.5', '1e2', ' 1', '1 ', 'abc', '101', '1001', '1000001', '99999999999999999999', 'NaN', 'Infinity', '__proto__', '%', '%zz', '%E0%A4%A', '日本', 'a'.repeat(300), 'queued', 'social-notes-data'];

/** A query string for an operation, from its documented query parameters, plus strays and repeats. */
function queryArb(doc: DocumentName, path: string, method: string): fc.Arbitrary<string> {
  const op = pointer(doc, `#/paths/${path.replace(/~/g, '~0').replace(/\//g, '~1')}/${method}`).node;
  const list = isObject(op) && Array.isArray(op['parameters']) ? (op['parameters'] as Schema[]) : [];
  const query = list
    .map((p) => (typeof p['$ref'] === 'string' ? pointer(doc, p['$ref']).node : p))
    .filter((p): p is Schema => isObject(p) && p['in'] === 'query');
  const entry = (name: string, schema: Schema): fc.Arbitrary<string[]> =>
    fc
      .option(
        fc.oneof(
          { weight: 3, arbitrary: fromSchema(doc, schema).map((v) => `${encodeURIComponent(name)}=${encodeURIComponent(String(v))}`) },
          { weight: 1, arbitrary: fc.constantFrom(...NASTY_QUERY).map((v) => `${name}=${encodeURIComponent(v)}`) },
          { weight: 1, arbitrary: fc.constantFrom(...NASTY_QUERY).map((v) => `${name}=${v}`) },
          { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...NASTY_QUERY), fc.constantFrom(...NASTY_QUERY)).map(([x, y]) => `${name}=${encodeURIComponent(x)}&${name}=${encodeURIComponent(y)}`) },
        ),
        { nil: undefined },
      )
      .map((v) => (v === undefined ? [] : [v]));
  const strays = fc.array(
    fc.tuple(fc.oneof(fc.constantFrom('__proto__', 'constructor', 'limit[]', 'page[0]', '', '%'), fc.string({ maxLength: 6 })), fc.constantFrom(...NASTY_QUERY)).map(([k, v]) => `${k}=${v}`),
    { maxLength: 2 },
  );
  return fc.tuple(fc.tuple(...query.map((p) => entry(String(p['name']), isObject(p['schema']) ? p['schema'] : {}))), strays).map(([parts, extra]) => {
    const all = [...parts.flat(), ...extra];
    return all.length === 0 ? '' : `?${all.join('&')}`;
  });
}

/** Sometimes an extra header that must not change the rules: an X-Emulator-Scenario of any kind. */
const scenarioHeader = fc.option(fc.constantFrom('rejected', 'text-rejected', '__proto__', 'constructor', 'nope', '', ' ', 'default', 'instant', 'a'.repeat(300)), { nil: undefined });

// ---------------------------------------------------------------------------------------------------------------
// POST /v1/tasks

const SUBMIT = DOCS.service['components'] as { schemas: Record<string, Schema> };
/** Each model's input schema, through SubmitTaskRequest's discriminator and the branch's `input`. */
const INPUT_SCHEMAS = Object.fromEntries(
  Object.entries(((SUBMIT.schemas['SubmitTaskRequest']?.['discriminator'] as Schema | undefined)?.['mapping'] ?? {}) as Record<string, string>).map(
    ([model, branch]) => {
      const [byInput] = SUBMIT.schemas[branch.split('/').pop() ?? '']?.['anyOf'] as { properties: Record<string, Schema> }[];
      return [model, byInput?.properties['input']?.['$ref'] as string];
    },
  ),
);
const submitFromSchema = fc.oneof(
  ...Object.entries(INPUT_SCHEMAS).map(([model, ref]) =>
    fc.record(
      {
        model: fc.constant(model),
        input: fromSchema('service', { $ref: ref }),
        webhook_url: fromSchema('service', { type: 'string', format: 'uri', maxLength: 2048 }),
        metadata: fromSchema('service', component('service', 'Metadata')),
      },
      { requiredKeys: ['model', 'input'] },
    ),
  ),
);
const submitSeeds = fc.oneof(
  { weight: 3, arbitrary: fc.string({ minLength: 1, maxLength: 30 }).map((note) => socialNote({ note })) },
  {
    weight: 2,
    arbitrary: fc.record({
      model: fc.constant('video-gen-2.0-fast'),
      input: fc.record({ prompt: fc.string({ minLength: 1, maxLength: 40 }), duration: fc.integer({ min: 4, max: 15 }), resolution: fc.constantFrom('480p', '720p', '1080p') }),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ model: 'avatar-photo', input: { image: 'https://example.com/p.png', audio: 'https://example.com/a.mp3' } }) },
  { weight: 4, arbitrary: submitFromSchema },
);

const visible = fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c));
const idempotencyCases = fc.oneof(
  fc.integer({ min: 1, max: 64 }).chain((n) => fc.string({ unit: visible, minLength: n, maxLength: n })).map((k) => ({ key: k, ok: true })),
  fc.string({ unit: visible, minLength: 65, maxLength: 80 }).map((k) => ({ key: k, ok: false })),
  fc.constantFrom('café', 'ÿÿÿÿ', 'a b', '\t', ' ', '', Buffer.from('日本', 'utf8').toString('latin1'), 'x'.repeat(63) + 'é').map((k) => ({ key: k, ok: false })),
);

/** File addresses that point outside the caller's files; never accepted. */
function traversalAddresses(w: World): string[] {
  return [
    'file_../../etc/passwd', 'file_1/../2', 'file_0', 'file_-1', 'file_99999999999999999999', w.foreignFile.id,
    `${PUBLIC_URL}/files/${w.foreignFile.name}`, `${PUBLIC_URL}/files/../../package.json`, `${PUBLIC_URL}/files/..%2F..%2Fpackage.json`,
    `${PUBLIC_URL}/files/%2e%2e/%2e%2e/package.json`, `${PUBLIC_URL}/files/`, `${PUBLIC_URL}/files/${w.ownFile.name}/../${w.foreignFile.name}`,
    `${PUBLIC_URL}/files/__proto__`, `${PUBLIC_URL}/files/constructor`, `${w.ownFile.id}/../${w.foreignFile.id}`, 'file:///etc/passwd',
    `${w.ownFile.id} `, ` ${w.ownFile.id}`,
  ];
}

fuzz(`POST /v1/tasks: schema-derived bodies and their mutations, Idempotency-Key at its limits, traversal in file addresses (${RUNS.submit} cases)`, async () => {
  await withWorld(async (w) => {
    const addresses = traversalAddresses(w);
    /** Idempotency keys used so far, with the body they were first used with. */
    const firstUse = new Map<string, string>();
    const kind = fc.oneof(
      { weight: 8, arbitrary: fc.record({ kind: fc.constant('mutated' as const), body: mutated(submitSeeds), scenario: scenarioHeader }) },
      { weight: 2, arbitrary: fc.record({ kind: fc.constant('idempotency' as const), idem: idempotencyCases, note: fc.string({ minLength: 1, maxLength: 20 }) }) },
      {
        weight: 2,
        arbitrary: fc.record({
          kind: fc.constant('traversal' as const),
          address: fc.constantFrom(...addresses),
          where: fc.constantFrom('avatar-image', 'avatar-audio', 'video-frames', 'video-videos', 'video-images'),
        }),
      },
    );
    await check(
      fc.asyncProperty(kind, async (k) => {
        const headers: Record<string, string> = { ...asA(w) };
        if (k.kind === 'mutated') {
          if (k.scenario !== undefined) headers['X-Emulator-Scenario'] = k.scenario;
          await exchange(w, { method: 'POST', path: '/v1/tasks', headers, body: { kind: 'json', value: k.body } });
        } else if (k.kind === 'idempotency') {
          headers['Idempotency-Key'] = k.idem.key;
          const value = socialNote({ note: `https://notes.example.com/n/${k.note}` });
          const first = firstUse.get(k.idem.key);
          await exchange(w, {
            method: 'POST',
            path: '/v1/tasks',
            headers,
            body: { kind: 'json', value },
            expect: (res) =>
              !k.idem.ok
                ? res.status === 422 && codeOf(res) === 'invalid_params' && JSON.stringify(res.body).includes('Idempotency-Key')
                  ? []
                  : [`a bad Idempotency-Key must be 422 invalid_params naming it, got ${res.status}`]
                : first === undefined || first === JSON.stringify(value)
                  ? expectStatus(200)(res)
                  : expectError(409, 'idempotency_conflict')(res),
          });
          if (k.idem.ok && first === undefined) firstUse.set(k.idem.key, JSON.stringify(value));
        } else {
          const input =
            k.where === 'avatar-image'
              ? { model: 'avatar-photo', input: { image: k.address, audio: 'https://example.com/a.mp3' } }
              : k.where === 'avatar-audio'
                ? { model: 'avatar-photo', input: { image: 'https://example.com/p.png', audio: k.address } }
                : k.where === 'video-frames'
                  ? { model: 'video-gen-2.0-fast', input: { mode: 'frames', prompt: 'x', image: k.address } }
                  : k.where === 'video-videos'
                    ? { model: 'video-gen-2.0-fast', input: { mode: 'video', prompt: 'x', videos: [k.address] } }
                    : { model: 'video-gen-2.0-fast', input: { mode: 'reference', prompt: 'x', images: [k.address] } };
          await exchange(w, { method: 'POST', path: '/v1/tasks', headers, body: { kind: 'json', value: input }, expect: expectError(422, 'invalid_params') });
        }
      }),
      params(RUNS.submit),
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------
// GET /v1/tasks, GET /v1/tasks/{id}, POST /v1/tasks/{id}/cancel

fuzz(`GET /v1/tasks (query), GET /v1/tasks/{id}, POST /v1/tasks/{id}/cancel: ids of others, traversal, junk (${RUNS.tasksRead} cases)`, async () => {
  await withWorld(async (w) => {
    const idArb = fc.oneof(
      { weight: 2, arbitrary: fc.constantFrom(...w.ownTasks).map((id) => ({ id, foreign: false })) },
      { weight: 2, arbitrary: fc.constant({ id: w.foreignTask, foreign: true }) },
      { weight: 3, arbitrary: nastyId.map((id) => ({ id, foreign: false })) },
      { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 20 }).map((s) => ({ id: encodeURIComponent(s), foreign: false })) },
    );
    const kind = fc.oneof(
      fc.record({ kind: fc.constant('list' as const), query: queryArb('service', '/v1/tasks', 'get') }),
      fc.record({ kind: fc.constantFrom('get' as const, 'cancel' as const), target: idArb, suffix: fc.constantFrom('', '/', '?x=1', '?__proto__=1') }),
    );
    await check(
      fc.asyncProperty(kind, async (k) => {
        if (k.kind === 'list') {
          await exchange(w, { method: 'GET', path: `/v1/tasks${k.query}`, headers: asA(w) });
          return;
        }
        const path = `/v1/tasks/${k.target.id}${k.kind === 'cancel' ? '/cancel' : ''}${k.suffix}`;
        await exchange(w, {
          method: k.kind === 'get' ? 'GET' : 'POST',
          path,
          headers: asA(w),
          // Another account's task is not there.
          ...(k.target.foreign ? { expect: expectError(404, 'not_found') } : {}),
        });
      }),
      params(RUNS.tasksRead),
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------
// POST /v1/files, JSON and multipart

const FILENAMES = ['a.png', 'clip.mp4', '../../etc/passwd', '..\\..\\boot.ini', '/etc/passwd', 'x.constructor', 'x.__proto__', 'x.toString', 'x.hasOwnProperty', '', '.', '..', 'a'.repeat(300), '日本.mp3', 'a.PNG', 'no-extension', 'x.json', 'x.'];
const filenameArb = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...FILENAMES) }, { weight: 1, arbitrary: fc.string({ maxLength: 20 }).filter((s) => !/["\r\n\\]/.test(s)) });

fuzz(`POST /v1/files: JSON bodies from UploadFileJson and their mutations, multipart with odd parts and names (${RUNS.files} cases)`, async () => {
  await withWorld(async (w) => {
    const jsonBody = mutated(
      fc.oneof(
        fromSchema('service', component('service', 'UploadFileJson')),
        fc.record({ content: fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b).toString('base64')), filename: filenameArb }, { requiredKeys: ['content'] }),
      ),
    );
    const multipart = fc.record({
      fields: fc.array(
        fc.tuple(
          fc.oneof(fc.constantFrom('duration', 'width', 'height', '__proto__', 'constructor', 'file', 'filename', 'mime_type'), fc.string({ minLength: 1, maxLength: 8 }).filter((s) => !/["\r\n\\]/.test(s))),
          fc.oneof(fc.constantFrom('5', '-1', '0', '86400', '86401', '1e3', 'abc', '', '100000', '100001', '1.5', ' 7 ', 'NaN'), fc.string({ maxLength: 8 })),
        ),
        { maxLength: 4 },
      ),
      files: fc.array(
        fc.record({
          field: fc.oneof({ weight: 4, arbitrary: fc.constant('file') }, { weight: 1, arbitrary: fc.constantFrom('other', '__proto__', 'files') }),
          bytes: fc.uint8Array({ maxLength: 256 }).map((b) => Buffer.from(b)),
          filename: filenameArb.filter((s) => s.length > 0),
          contentType: fc.constantFrom('application/octet-stream', 'image/png', 'video/mp4', 'audio/mpeg', 'text/plain', 'image/../../x', 'x', 'application/json'),
        }),
        { maxLength: 2 },
      ),
    });
    const kind = fc.oneof(
      { weight: 3, arbitrary: jsonBody.map((value) => ({ kind: 'json' as const, value })) },
      { weight: 2, arbitrary: multipart.map((m) => ({ kind: 'multipart' as const, ...m })) },
    );
    await check(
      fc.asyncProperty(kind, async (k) => {
        const body: Body = k.kind === 'json' ? { kind: 'json', value: k.value } : { kind: 'multipart', fields: k.fields, files: k.files };
        await exchange(w, {
          method: 'POST',
          path: '/v1/files',
          headers: asA(w),
          body,
          // A stored file is served under a fresh random name, whatever the upload was called.
          expect: (res) =>
            res.status !== 200 || /^http:\/\/127\.0\.0\.1:4010\/files\/[A-Za-z0-9]{32}\.[a-z0-9]+$/.test(String((res.body as { url?: unknown }).url))
              ? []
              : [`the file is served at ${String((res.body as { url?: unknown }).url)}`],
        });
      }),
      params(RUNS.files),
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------
// GET /v1/models, GET /v1/models/{id}, GET /v1/pricing

fuzz(`GET /v1/models, /v1/models/{id}, /v1/pricing: model ids real and nasty, stray queries (${RUNS.models} cases)`, async () => {
  await withWorld(async (w) => {
    const kind = fc.oneof(
      fc.record({ path: fc.constantFrom('/v1/models', '/v1/pricing'), query: fc.constantFrom('', '?x=1', '?__proto__[polluted]=1', '?%=%', '?limit=-1') }),
      fc.record({
        path: fc.oneof(fc.constantFrom(...TASK_MODELS, ...TEXT_MODELS), nastyId, fc.string({ minLength: 1, maxLength: 20 }).map(encodeURIComponent)).map((id) => `/v1/models/${id}`),
        query: fc.constantFrom('', '?x=1'),
      }),
    );
    await check(
      fc.asyncProperty(kind, async (k) => {
        const known = [...TASK_MODELS, ...TEXT_MODELS].some((m) => k.path === `/v1/models/${m}`);
        await exchange(w, {
          method: 'GET',
          path: `${k.path}${k.query}`,
          headers: asA(w),
          ...(k.path.startsWith('/v1/models/') ? { expect: known ? expectStatus(200) : expectStatus(404) } : { expect: expectStatus(200) }),
        });
      }),
      params(RUNS.models),
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------
// The three text endpoints

const chatSeeds = fc.oneof(
  { weight: 4, arbitrary: withModel(fromSchema('service', component('service', 'ChatCompletionRequest')), TEXT_MODELS) },
  {
    weight: 2,
    arbitrary: fc.record({
      model: fc.constantFrom(...TEXT_MODELS),
      messages: fc.constant([{ role: 'user', content: 'Say hello.' }]),
      response_format: fc.record({ type: fc.constant('json_schema'), json_schema: fc.record({ name: fc.constant('x'), schema: schemaLike }) }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      model: fc.constantFrom(...TEXT_MODELS),
      messages: fc.constant([{ role: 'user', content: 'Call it.' }]),
      tools: fc.array(fc.record({ type: fc.constant('function'), function: fc.record({ name: fc.constantFrom('f', 'g'), parameters: schemaLike }) }), { minLength: 1, maxLength: 2 }),
      tool_choice: fc.constantFrom<unknown>('required', 'auto', 'none', { type: 'function', function: { name: 'f' } }, { type: 'function', function: { name: 'zz' } }),
    }),
  },
);
const responsesSeeds = withModel(fromSchema('service', component('service', 'ResponseRequest')), TEXT_MODELS);
const messagesSeeds = withModel(fromSchema('service', component('service', 'MessageRequest')), TEXT_MODELS);

for (const [path, seeds, runs] of [
  ['/v1/chat/completions', chatSeeds, RUNS.chat],
  ['/v1/responses', responsesSeeds, RUNS.responses],
  ['/v1/messages', messagesSeeds, RUNS.messages],
] as const) {
  fuzz(`POST ${path}: schema-derived bodies and their mutations, schemas inside bodies, scenario headers, auth variants (${runs} cases)`, async () => {
    await withWorld(async (w) => {
      const auth: fc.Arbitrary<Record<string, string>> = fc.oneof(
        { weight: 12, arbitrary: fc.constant<Record<string, string>>(asA(w)) },
        { weight: 1, arbitrary: fc.constant<Record<string, string>>(path === '/v1/messages' ? { 'x-api-key': w.keyA } : { Authorization: `bearer   ${w.keyA}  ` }) },
        {
          weight: 1,
          arbitrary: fc
            .constantFrom<Record<string, string>>({}, { Authorization: 'Bearer constructor' }, { Authorization: 'Bearer __proto__' }, { Authorization: `Basic ${w.keyA}` }, { Authorization: `Bearer ${w.keyA} extra` }, { 'x-api-key': '__proto__' }, { Authorization: `Bearer ${'k'.repeat(8000)}` })
            .map((h) => ({ ...h, unauthenticated: 'yes' })),
        },
      );
      await check(
        fc.asyncProperty(mutated(seeds), auth, scenarioHeader, async (body, authHeaders, scenario) => {
          const { unauthenticated, ...headers } = authHeaders;
          if (scenario !== undefined) headers['X-Emulator-Scenario'] = scenario;
          await exchange(w, {
            method: 'POST',
            path,
            headers,
            body: { kind: 'json', value: body },
            ...(unauthenticated ? { expect: expectError(401, 'invalid_api_key') } : {}),
          });
        }),
        params(runs),
      );
    });
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Wire-level nasties on every endpoint that takes a JSON body

interface JsonEndpoint {
  method: Verb;
  path: (w: World) => string;
  /** A body this endpoint accepts. */
  valid: (w: World) => Record<string, unknown>;
}
const CHAT_BODY = { model: 'svc-text-lite', messages: [{ role: 'user', content: 'Say hello.' }] };
const RESPONSES_BODY = { model: 'svc-text-lite', input: 'Say hello.' };
const MESSAGES_BODY = { model: 'svc-text-lite', max_tokens: 16, messages: [{ role: 'user', content: 'Say hello.' }] };
const JSON_ENDPOINTS: JsonEndpoint[] = [
  { method: 'POST', path: () => '/v1/tasks', valid: () => socialNote() },
  { method: 'POST', path: () => '/v1/files', valid: () => ({ content: 'aGVsbG8=', filename: 'a.txt' }) },
  { method: 'POST', path: () => '/v1/chat/completions', valid: () => CHAT_BODY },
  { method: 'POST', path: () => '/v1/responses', valid: () => RESPONSES_BODY },
  { method: 'POST', path: () => '/v1/messages', valid: () => MESSAGES_BODY },
  { method: 'POST', path: () => '/_emulator/clock/advance', valid: () => ({ seconds: 0 }) },
  { method: 'POST', path: () => '/_emulator/clock/speed', valid: () => ({ speed: 2 }) },
  { method: 'POST', path: () => '/_emulator/accounts', valid: () => ({ points: '10.000' }) },
  { method: 'PATCH', path: (w) => `/_emulator/accounts/${w.accountB}`, valid: () => ({ concurrency: 5 }) },
  { method: 'POST', path: (w) => `/_emulator/accounts/${w.accountB}/keys`, valid: () => ({ rpm: 1000 }) },
  { method: 'PATCH', path: (w) => `/_emulator/keys/${w.keyB}`, valid: () => ({ rpm: 1000 }) },
  { method: 'POST', path: (w) => `/_emulator/accounts/${w.accountB}/webhook`, valid: () => ({ url: 'https://hooks.example.com/b' }) },
  { method: 'POST', path: (w) => `/_emulator/tasks/${w.ownTasks[0] ?? ''}/complete`, valid: () => ({}) },
  { method: 'POST', path: (w) => `/_emulator/tasks/${w.ownTasks[1] ?? ''}/fail`, valid: () => ({ code: 'generation_failed' }) },
  { method: 'POST', path: () => '/_emulator/scenarios', valid: () => ({ scenarios: [{ name: 'fuzz-loaded', outcome: 'succeeded' }] }) },
];
const headersFor = (w: World, path: string): Record<string, string> => (path.startsWith('/_emulator') ? ADMIN : asA(w));
const endpointArb = fc.constantFrom(...JSON_ENDPOINTS);

const WRONG_TYPES = ['text/plain', 'application/x-www-form-urlencoded', 'application/xml', 'application/octet-stream', 'text/json', 'application/jsonx', 'image/png', 'multipart/form-data; boundary=fuzz'];
const WRONG_CHARSETS = ['application/json; charset=latin1', 'application/json; charset=utf-16', 'application/json; charset="iso-8859-1"', 'application/json; charset=ascii'];
const JSON_TYPES = ['application/json; charset=utf-8', 'APPLICATION/JSON', 'application/vnd.api+json', 'application/json;charset=UTF8', 'application/json; charset="utf-8"'];

fuzz(`wrong content types, charsets and encodings on every JSON endpoint: 415 (400 on text endpoints) (${RUNS.contentTypes} cases)`, async () => {
  await withWorld(async (w) => {
    const kind = fc.oneof(
      { weight: 3, arbitrary: fc.record({ endpoint: endpointArb, type: fc.constantFrom(...WRONG_TYPES, null), as: fc.constantFrom('json', 'form', 'multipart') }).map((k) => ({ ...k, kind: 'wrong-type' as const })) },
      { weight: 2, arbitrary: fc.record({ endpoint: endpointArb, type: fc.constantFrom(...WRONG_CHARSETS) }).map((k) => ({ ...k, kind: 'wrong-charset' as const })) },
      { weight: 2, arbitrary: fc.record({ endpoint: endpointArb, type: fc.constantFrom(...JSON_TYPES) }).map((k) => ({ ...k, kind: 'json-type' as const })) },
      { weight: 1, arbitrary: fc.record({ endpoint: endpointArb, encoding: fc.constantFrom('gzip', 'deflate', 'br', 'compress', 'x-unknown', 'identity, gzip') }).map((k) => ({ ...k, kind: 'encoding' as const })) },
    );
    await check(
      fc.asyncProperty(kind, async (k) => {
        const path = k.endpoint.path(w);
        const headers = headersFor(w, path);
        const valid = k.endpoint.valid(w);
        const text = groupOf(path) !== 'general';
        const wrongType = text ? expectError(400, 'bad_request') : expectError(415, 'unsupported_media_type');
        if (k.kind === 'wrong-type') {
          const body: Body =
            k.as === 'multipart'
              ? { kind: 'multipart', fields: Object.entries({ ...valid, x: 1 }).map(([name, v]) => [name, typeof v === 'string' ? v : JSON.stringify(v)]), files: [] }
              : k.as === 'form'
                ? { kind: 'raw', contentType: k.type, bytes: new URLSearchParams(Object.entries({ ...valid, x: 1 }).map(([n, v]): [string, string] => [n, JSON.stringify(v)])).toString() }
                : { kind: 'raw', contentType: k.type, bytes: JSON.stringify(valid) };
          // A multipart body is sent with its own content type, whatever was drawn; /v1/files takes one.
          const takesMultipart = path === '/v1/files' && (body.kind === 'multipart' || String(k.type).startsWith('multipart/'));
          await exchange(w, { method: k.endpoint.method, path, headers, body, ...(takesMultipart ? {} : { expect: wrongType }) });
        } else if (k.kind === 'wrong-charset') {
          await exchange(w, { method: k.endpoint.method, path, headers, body: { kind: 'raw', contentType: k.type, bytes: JSON.stringify(valid) }, expect: wrongType });
        } else if (k.kind === 'json-type') {
          await exchange(w, { method: k.endpoint.method, path, headers, body: { kind: 'raw', contentType: k.type, bytes: JSON.stringify(valid) }, expect: (res) => [...expectNot(415)(res), ...(res.status === 400 ? [`a JSON content type was refused: ${String(codeOf(res))}`] : [])] });
        } else {
          await exchange(w, { method: k.endpoint.method, path, headers, body: { kind: 'raw', contentType: 'application/json', bytes: JSON.stringify(valid), encoding: k.encoding } });
        }
      }),
      params(RUNS.contentTypes),
    );
  });
});

const MALFORMED = ['{', '}', '{"a":}', '{"a":1,}', "{'a':1}", '{"a":NaN}', '{"a":Infinity}', '{"a":1} x', '{"a":1}{"b":2}', '\uFEFF{}', '{"a":"\\x"}', '{"a":01}', '{"a":.5}', '{"a":"\u0001"}', ' ', '{"a" 1}', '{a:1}', '[', '{"a":[1,2}', 'nul', 'tru', '/* c */ {}', '{"a":1}\u0000'];
const NON_OBJECTS = ['[]', '[{}]', '"str"', '123', 'true', 'null', '-0', '1e999', '""', `[${'0,'.repeat(1000)}0]`];
/** Bytes that are not UTF-8: stray continuation bytes, truncated sequences, overlongs, encoded surrogates. */
const BAD_UTF8 = [[0xff], [0xfe, 0xff], [0xc3], [0xe2, 0x82], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0x80], [0xf8, 0x88, 0x80, 0x80, 0x80]];

fuzz(`malformed JSON, non-object JSON, truncated bodies, duplicate keys, invalid UTF-8 on every JSON endpoint (${RUNS.malformed} cases)`, async () => {
  await withWorld(async (w) => {
    const kind = fc.oneof(
      fc.record({ kind: fc.constant('malformed' as const), endpoint: endpointArb, text: fc.constantFrom(...MALFORMED) }),
      fc.record({ kind: fc.constant('non-object' as const), endpoint: endpointArb, text: fc.constantFrom(...NON_OBJECTS) }),
      fc.record({ kind: fc.constant('truncated' as const), endpoint: endpointArb, at: fc.nat() }),
      fc.record({ kind: fc.constant('duplicate' as const), endpoint: endpointArb, pick: fc.nat(), value: nastyValue, first: fc.boolean() }),
      fc.record({ kind: fc.constant('bad-utf8' as const), endpoint: endpointArb, bytes: fc.constantFrom(...BAD_UTF8), at: fc.nat(), inString: fc.boolean() }),
    );
    await check(
      fc.asyncProperty(kind, async (k) => {
        const path = k.endpoint.path(w);
        const headers = headersFor(w, path);
        const valid = k.endpoint.valid(w);
        const json = (bytes: Buffer | string, expect?: (res: Response) => string[]): Promise<Response> =>
          exchange(w, { method: k.endpoint.method, path, headers, body: { kind: 'raw', contentType: 'application/json', bytes }, ...(expect ? { expect } : {}) });
        switch (k.kind) {
          case 'malformed':
          case 'non-object':
            await json(k.text, expectError(400, 'bad_request'));
            return;
          case 'truncated': {
            const full = JSON.stringify(valid);
            const cut = full.slice(0, 1 + (k.at % (full.length - 1)));
            await json(cut, expectError(400, 'bad_request'));
            return;
          }
          case 'duplicate': {
            const entries = Object.entries(valid);
            const [key] = entries[k.pick % entries.length] ?? ['x'];
            const extra: [string, unknown] = [key, k.value];
            await json(toJsonText(dupObject(k.first ? [extra, ...entries] : [...entries, extra])));
            return;
          }
          case 'bad-utf8': {
            const full = Buffer.from(JSON.stringify(valid));
            // Inside a string value (after an opening quote) or anywhere.
            const quotes = [...full.keys()].filter((i) => full[i] === 0x22);
            const at = k.inString && quotes.length > 0 ? (quotes[k.at % quotes.length] ?? 0) + 1 : k.at % (full.length + 1);
            await json(Buffer.concat([full.subarray(0, at), Buffer.from(k.bytes), full.subarray(at)]));
            return;
          }
        }
      }),
      params(RUNS.malformed),
    );
  });
});

/**
 * Bodies whose free-form objects (schemas of `type: object` with no listed fields: tool parameters, response
 * schemas, content sources, tool calls, usage, file overrides) are present as `{}`: the places where any depth of
 * nesting passes validation and reaches the emulator's code and its store.
 */
const RICH_BODIES: { method: Verb; path: (w: World, freshTask: string) => string; body: () => unknown }[] = [
  {
    method: 'POST',
    path: () => '/v1/chat/completions',
    body: () => ({
      model: 'svc-text-lite',
      messages: [{ role: 'user', content: 'x' }, { role: 'assistant', content: null, tool_calls: [{}] }],
      response_format: { type: 'json_schema', json_schema: { name: 'x', schema: {} } },
      tools: [{ type: 'function', function: { name: 'f', parameters: {} } }],
      tool_choice: 'required',
      stream_options: {},
    }),
  },
  {
    method: 'POST',
    path: () => '/v1/chat/completions',
    body: () => ({ model: 'svc-text-lite', messages: [{ role: 'user', content: 'x' }], response_format: { type: 'json_schema', json_schema: { name: 'x', schema: {} } } }),
  },
  {
    method: 'POST',
    path: () => '/v1/messages',
    body: () => ({ model: 'svc-text-lite', max_tokens: 16, system: [{ type: 'text', text: 'x', source: {} }], messages: [{ role: 'user', content: [{ type: 'image', source: {} }] }] }),
  },
  { method: 'POST', path: () => '/v1/responses', body: () => ({ model: 'svc-text-lite', input: 'x', extra: {} }) },
  { method: 'POST', path: () => '/v1/tasks', body: () => ({ ...socialNote(), metadata: {}, params: {} }) },
  { method: 'POST', path: () => '/v1/files', body: () => ({ content: 'aGVsbG8=', extra: {} }) },
  { method: 'POST', path: (_w, task) => `/_emulator/tasks/${task}/complete`, body: () => ({ output: { usage: {}, files: [{}] } }) },
  { method: 'POST', path: () => '/_emulator/scenarios', body: () => ({ scenarios: [{ name: 'deep', outcome: 'succeeded', output: { usage: {}, files: [{}] }, per_model: {} }] }) },
  { method: 'POST', path: () => '/_emulator/accounts', body: () => ({ extra: {} }) },
];

/** Paths to every `{}` in a body. */
function emptyObjectSites(value: unknown, at: (string | number)[] = []): (string | number)[][] {
  if (isObject(value) && Object.keys(value).length === 0) return [at];
  return childKeys(value).flatMap((k) => emptyObjectSites(childOf(value, k), [...at, k]));
}
const setAt = (value: unknown, at: (string | number)[], leaf: unknown): unknown => {
  const [k, ...rest] = at;
  return k === undefined ? leaf : withChild(value, k, setAt(childOf(value, k), rest, leaf));
};

fuzz(`deep nesting (up to 10,000 levels) in every free-form object of the documents, and anywhere else (${RUNS.deep} cases)`, async () => {
  await withWorld(async (w) => {
    const refill = (await call(w.t, 'POST', '/_emulator/accounts', ADMIN, { points: '999999999.000' })).body as { id: string };
    const refillKey = ((await call(w.t, 'POST', `/_emulator/accounts/${refill.id}/keys`, ADMIN, {})).body as { key: string }).key;
    const kind = fc.record({
      site: fc.oneof({ weight: 3, arbitrary: fc.tuple(fc.constantFrom(...RICH_BODIES), fc.nat()).map(([rich, n]) => ({ rich, n })) }, { weight: 1, arbitrary: endpointArb.map((endpoint) => ({ endpoint })) }),
      depth: fc.constantFrom(100, 1000, 5000, 10_000),
      shape: fc.constantFrom('array', 'object', 'mixed') as fc.Arbitrary<'array' | 'object' | 'mixed'>,
      path: fc.array(fc.nat(), { maxLength: 4 }),
      op: fc.constantFrom('set', 'add') as fc.Arbitrary<'set' | 'add'>,
      key: keyArb,
    });
    await check(
      fc.asyncProperty(kind, async (k) => {
        const deep = new RawJson(deepText(k.depth, k.shape));
        let method: Verb;
        let path: string;
        let value: unknown;
        if ('rich' in k.site) {
          // Control steps need a task that is not finished yet.
          const fresh = await request(w.t.emulator.app).post('/v1/tasks').set({ Authorization: `Bearer ${refillKey}` }).send(socialNote());
          const body = k.site.rich.body();
          const sites = emptyObjectSites(body);
          method = k.site.rich.method;
          path = k.site.rich.path(w, String((fresh.body as { id?: unknown }).id));
          value = setAt(body, sites[k.site.n % sites.length] ?? [], deep);
        } else {
          method = k.site.endpoint.method;
          path = k.site.endpoint.path(w);
          value = mutate(k.site.endpoint.valid(w), k.path, { path: k.path, op: k.op, key: k.key, pick: 0, value: deep });
        }
        await exchange(w, { method, path, headers: headersFor(w, path), body: { kind: 'json', value } });
      }),
      params(RUNS.deep),
    );
  });
});

const MB = 1024 * 1024;
fuzz(`bodies at the 1 MB limit and just over (huge strings and arrays, multibyte padding); uploads at 50 MB and just over (${RUNS.sizes} cases)`, async () => {
  await withWorld(async (w) => {
    // /v1/files takes larger bodies (50 MB files); its limits are the upload cases below.
    const limited = JSON_ENDPOINTS.filter((e) => e.path(w) !== '/v1/files');
    // The upload limits, once each: a 50 MB file is taken, one byte more is 413, as multipart and as Base64 JSON.
    for (const [form, size] of [['multipart', 50 * MB], ['multipart', 50 * MB + 1], ['json', 50 * MB + 1]] as const) {
      const body: Body =
        form === 'multipart'
          ? { kind: 'multipart', fields: [], files: [{ field: 'file', bytes: Buffer.alloc(size, 7), filename: 'big.mp4', contentType: 'video/mp4' }] }
          : { kind: 'raw', contentType: 'application/json', bytes: `{"filename":"big.mp4","content":"${Buffer.alloc(size, 7).toString('base64')}"}` };
      await once(w, { method: 'POST', path: '/v1/files', headers: asA(w), body, expect: size > 50 * MB ? expectError(413, 'payload_too_large') : expectStatus(200) });
    }
    const kind = fc.record({
      endpoint: fc.constantFrom(...limited),
      delta: fc.constantFrom(-1, 0, 1, 2, -4096),
      pad: fc.constantFrom('string', 'array', 'multibyte', 'content') as fc.Arbitrary<'string' | 'array' | 'multibyte' | 'content'>,
    });
    await check(
      fc.asyncProperty(kind, async (k) => {
        const path = k.endpoint.path(w);
        const target = MB + k.delta;
        const base = k.endpoint.valid(w);
        // Pad a valid body with an ignored field (or a message's content) to exactly `target` bytes.
        const shell = (fill: string): string => {
          if (k.pad === 'content' && Array.isArray(base['messages'])) return JSON.stringify({ ...base, messages: [{ role: 'user', content: fill }] });
          if (k.pad === 'content' && typeof base['input'] === 'string') return JSON.stringify({ ...base, input: fill });
          return JSON.stringify({ ...base, pad: fill });
        };
        let text: string;
        if (k.pad === 'array') {
          const room = target - Buffer.byteLength(shell('')) + 2; // '""' replaced by '[...]'
          const count = Math.max(0, Math.floor((room - 1) / 2));
          let arr = `[${new Array(count).fill('0').join(',')}]`;
          while (Buffer.byteLength(arr) < room) arr = arr.replace('[', '[ ');
          text = shell('').replace('"pad":""', `"pad":${arr}`);
        } else if (k.pad === 'multibyte') {
          const room = target - Buffer.byteLength(shell(''));
          text = shell('é'.repeat(Math.floor(room / 2)) + 'x'.repeat(room % 2));
        } else {
          text = shell('x'.repeat(Math.max(0, target - Buffer.byteLength(shell('')))));
        }
        const bytes = Buffer.byteLength(text);
        await exchange(w, {
          method: k.endpoint.method,
          path,
          headers: headersFor(w, path),
          body: { kind: 'raw', contentType: 'application/json', bytes: text },
          expect: bytes > MB ? expectError(413, 'payload_too_large') : expectNot(413),
        });
      }),
      params(RUNS.sizes),
    );
  });
});

fuzz(`__proto__ / constructor / prototype keys in input, params, metadata and everywhere else: no pollution, echoed as data (${RUNS.protoKeys} cases)`, async () => {
  await withWorld(async (w) => {
    const kind = fc.record({
      endpoint: fc.oneof({ weight: 4, arbitrary: fc.constant(JSON_ENDPOINTS[0] as JsonEndpoint) }, { weight: 3, arbitrary: endpointArb }),
      where: fc.constantFrom('input', 'params', 'metadata', 'top', 'anywhere'),
      key: fc.constantFrom(...PROTO_KEYS),
      value: fc.oneof(fc.constantFrom(...PROTO_VALUES), fc.constantFrom<unknown>('yes', 1, null, [], { polluted: 'yes' }, { prototype: { polluted: 'yes' } })),
      path: fc.array(fc.nat(), { maxLength: 3 }),
    });
    await check(
      fc.asyncProperty(kind, async (k) => {
        const path = k.endpoint.path(w);
        const valid = k.endpoint.valid(w);
        const put = (obj: unknown, key: string, value: unknown): unknown => (isObject(obj) ? withChild(obj, key, value) : obj);
        let value: unknown;
        if (k.where === 'input' || k.where === 'params') value = put(withoutChild(valid, 'input'), k.where, put(isObject(valid['input']) ? valid['input'] : {}, k.key, k.value));
        else if (k.where === 'metadata') value = put(valid, 'metadata', Object.fromEntries([['note', 'x'], [k.key, k.value]]));
        else if (k.where === 'top') value = put(valid, k.key, k.value);
        else value = mutate(valid, k.path, { path: k.path, op: 'add', key: k.key, pick: 0, value: k.value });
        await exchange(w, {
          method: k.endpoint.method,
          path,
          headers: headersFor(w, path),
          body: { kind: 'json', value },
          expect: (res) => {
            // Metadata is echoed unchanged: a string under `__proto__` is an ordinary key.
            if (path !== '/v1/tasks' || k.where !== 'metadata' || res.status !== 200 || typeof k.value !== 'string') return [];
            const metadata = (res.body as { metadata?: unknown }).metadata;
            return isObject(metadata) && Object.hasOwn(metadata, k.key) && metadata[k.key] === k.value ? [] : [`metadata.${k.key} was not echoed: ${excerpt(metadata)}`];
          },
        });
      }),
      params(RUNS.protoKeys),
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Operations without a body, sent one anyway

fuzz(`bodies sent to operations that take none (GETs, cancel, control steps): the answer stays documented (${RUNS.bodylessBodies} cases)`, async () => {
  await withWorld(async (w) => {
    const targets: [Verb, (w: World) => string][] = [
      ['GET', () => '/v1/tasks'],
      ['GET', (x) => `/v1/tasks/${x.ownTasks[0] ?? ''}`],
      ['POST', () => '/v1/tasks/T261123090000AAAAAA/cancel'],
      ['GET', () => '/v1/models'],
      ['GET', () => '/v1/models/svc-text-pro'],
      ['GET', () => '/v1/pricing'],
      ['GET', () => '/_emulator/health'],
      ['GET', () => '/_emulator/clock'],
      ['GET', () => '/_emulator/accounts'],
      ['GET', () => '/_emulator/tasks'],
      ['GET', () => '/_emulator/scenarios'],
      ['GET', () => '/_emulator/records'],
      ['POST', () => '/_emulator/tasks/T261123090000AAAAAA/advance'],
      ['POST', (x) => `/_emulator/accounts/${x.accountB}/webhook/test`],
    ];
    const kind = fc.record({
      target: fc.constantFrom(...targets),
      body: fc.oneof(
        fc.constantFrom(...MALFORMED, ...NON_OBJECTS).map((text) => ({ kind: 'raw' as const, contentType: 'application/json', bytes: text })),
        fc.jsonValue({ maxDepth: 2 }).map((value) => ({ kind: 'json' as const, value })),
        fc.constantFrom('text/plain', 'application/xml', 'application/json; charset=latin1').map((type) => ({ kind: 'raw' as const, contentType: type, bytes: 'hello' })),
      ),
    });
    await check(
      fc.asyncProperty(kind, async (k) => {
        const [method, pathOf] = k.target;
        const path = pathOf(w);
        await exchange(w, { method, path, headers: headersFor(w, path), body: k.body as Body });
      }),
      params(RUNS.bodylessBodies),
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Paths: traversal, malformed percent-encodings, case variants, unknown paths, wrong methods

fuzz(`path parameters and paths: traversal, malformed percent-encodings, case variants, unknown paths, wrong methods (${RUNS.paths} cases)`, async () => {
  await withWorld(async (w) => {
    const templates: [Verb, (id: string) => string][] = [
      ['GET', (id) => `/v1/tasks/${id}`],
      ['POST', (id) => `/v1/tasks/${id}/cancel`],
      ['GET', (id) => `/v1/models/${id}`],
      ['GET', (id) => `/files/${id}`],
      ['GET', (id) => `/_emulator/accounts/${id}`],
      ['GET', (id) => `/_emulator/accounts/${id}/ledger`],
      ['GET', (id) => `/_emulator/keys/${id}`],
      ['GET', (id) => `/_emulator/records/${id}`],
      ['POST', (id) => `/_emulator/tasks/${id}/advance`],
      ['POST', (id) => `/_emulator/tasks/${id}/cancel`],
      ['POST', (id) => `/_emulator/webhooks/deliveries/${id}/resend`],
      ['POST', (id) => `/_emulator/accounts/${id}/webhook/rotate`],
    ];
    const fixed = [
      '/files/../../package.json', '/files/..%2F..%2Fpackage.json', '/files/%2e%2e%2f%2e%2e%2fpackage.json', '/files/....//....//package.json',
      '/v1/tasks/../../package.json', '/v1/../package.json', '/_emulator/../package.json', '/v1/tasks/..%2f..%2fpackage.json',
      '/v1//tasks', '/v1/tasks//', '/v1/nope', '/_emulator/nope', '/v1', '/_emulator', '/', '/v1/tasks/%2F',
      '/v1/chat/completions/extra', '/v1/messages/batches', '/v1/responses/resp_1', `/files/${w.ownFile.name}`, `/files/${w.foreignFile.name}`,
      `/files/${w.ownFile.name}/..`, `/files/${w.ownFile.name}%00.png`, '/files/', '/files',
    ];
    const casePath = fc
      .tuple(
        fc.constantFrom('/v1/tasks', '/v1/models', '/v1/pricing', '/v1/chat/completions', '/v1/responses', '/v1/messages', '/_emulator/clock', '/_emulator/accounts', '/v1/files'),
        fc.array(fc.boolean(), { minLength: 24, maxLength: 24 }),
      )
      .map(([p, mask]) => [...p].map((ch, i) => (mask[i] ? ch.toUpperCase() : ch)).join(''));
    const kind = fc.oneof(
      {
        weight: 4,
        arbitrary: fc.record({
          template: fc.constantFrom(...templates),
          id: fc.oneof(nastyId, fc.constantFrom(w.foreignTask, w.ownTasks[0] ?? '', w.accountA, 'acct_demo', w.keyA, DEMO_KEY, w.deliveryId, w.requestId, w.ownFile.name, w.foreignFile.name)),
        }).map(({ template, id }) => ({ method: template[0], path: template[1](id) })),
      },
      { weight: 2, arbitrary: fc.constantFrom(...fixed).map((path) => ({ method: 'GET' as Verb, path })) },
      { weight: 2, arbitrary: fc.tuple(casePath, fc.constantFrom<Verb>('GET', 'POST')).map(([path, method]) => ({ method, path, variant: true })) },
      { weight: 1, arbitrary: fc.tuple(fc.constantFrom('/v1/tasks', '/v1/models', '/v1/chat/completions', '/_emulator/clock', '/_emulator/accounts', '/v1/files'), fc.constantFrom<Verb>('PUT', 'DELETE', 'PATCH')).map(([path, method]) => ({ method, path })) },
    );
    await check(
      fc.asyncProperty(kind, async (k) => {
        const { method, path } = k;
        const lower = path.toLowerCase();
        // Paths are exact: a case variant of a real path is an unknown path.
        const variant = 'variant' in k && path !== lower && !lower.startsWith('/files/');
        const headers = lower.startsWith('/_emulator') ? ADMIN : lower.startsWith('/v1') ? asA(w) : {};
        const body: Body | undefined = method === 'GET' ? undefined : groupOf(path) === 'general' ? undefined : { kind: 'json', value: {} };
        await exchange(w, {
          method,
          path,
          headers,
          ...(body ? { body } : {}),
          expect: (res) => {
            const problems: string[] = [];
            // Nothing but the caller's own stored files is ever served from /files.
            if (isFilesPath(path) && res.status === 200 && path !== `/files/${w.ownFile.name}` && path !== `/files/${w.foreignFile.name}`) problems.push('a file was served for a path that names none');
            if (path.includes(w.foreignTask) && path.startsWith('/v1/') && res.status !== 404) problems.push(`another account's task answered ${res.status}`);
            if (variant && (res.status !== 404 || codeOf(res) !== 'not_found')) problems.push(`a case variant of a path answered ${res.status} ${String(codeOf(res) ?? '')}, not 404 not_found`);
            return problems;
          },
        });
      }),
      params(RUNS.paths),
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Signing headers at their limits

fuzz(`X-Svc-Timestamp / X-Svc-Nonce / X-Svc-Signature at and past their limits: the refusal is predicted (${RUNS.signing} cases)`, async () => {
  const w = await world({ signing: true });
  try {
    const signing = w.signingKey;
    if (!signing) throw new Error('no signing key');
    /** Nonces whose signature checked out: spent, even when a later check refused the request. */
    const spent = new Set<string>();
    const targets: [Verb, string, string | undefined][] = [
      ['GET', '/v1/tasks?limit=5', undefined],
      ['GET', '/v1/models', undefined],
      ['POST', '/v1/tasks', JSON.stringify(socialNote())],
      ['POST', '/v1/chat/completions', JSON.stringify(CHAT_BODY)],
      ['POST', '/v1/messages', JSON.stringify(MESSAGES_BODY)],
    ];
    const kind = fc.record({
      target: fc.constantFrom(...targets),
      ts: fc.constantFrom('now', 'now', 'now-290', 'now+290', 'now-310', 'now+310', 'now.5', '0', '-1', '1e3', '1 23', 'abc', '9999999999999', '999999999999', ''),
      nonce: fc.oneof(
        { weight: 4, arbitrary: fc.integer({ min: 6, max: 66 }).chain((n) => fc.string({ unit: visible, minLength: n, maxLength: n })) },
        { weight: 1, arbitrary: fc.constantFrom('', 'with space ok', 'caf\u00e9-caf\u00e9-caf\u00e9', 'abc\tdefghi', 'reused-nonce-1') },
      ),
      signature: fc.constantFrom('correct', 'correct', 'other-body', 'random', 'uppercase', 'no-prefix', 'empty'),
      omit: fc.constantFrom('none', 'none', 'none', 'timestamp', 'nonce', 'signature'),
    });
    await check(
      fc.asyncProperty(kind, async (k) => {
        const [method, path, bodyText] = k.target;
        const now = Math.floor(Date.now() / 1000);
        const ts = k.ts === 'now.5' ? `${now}.5` : k.ts.startsWith('now') ? String(now + Number(k.ts.slice(3) || 0)) : k.ts;
        const sign = (body: string): string => documentedSignature(signing.secret, ts, k.nonce, method, path, body);
        const signature =
          k.signature === 'correct'
            ? sign(bodyText ?? '')
            : k.signature === 'other-body'
              ? sign(`${bodyText ?? ''} `)
              : k.signature === 'random'
                ? `v1=${'ab'.repeat(32)}`
                : k.signature === 'uppercase'
                  ? `v1=${sign(bodyText ?? '').slice(3).toUpperCase()}`
                  : k.signature === 'no-prefix'
                    ? sign(bodyText ?? '').slice(3)
                    : '';
        const headers: Record<string, string> = { Authorization: `Bearer ${signing.key}` };
        if (k.omit !== 'timestamp') headers['X-Svc-Timestamp'] = ts;
        if (k.omit !== 'nonce') headers['X-Svc-Nonce'] = k.nonce;
        if (k.omit !== 'signature') headers['X-Svc-Signature'] = signature;
        // The predicted refusal, in the documented order of the checks.
        const sentTs = headers['X-Svc-Timestamp'] ?? '';
        const sentNonce = headers['X-Svc-Nonce'] ?? '';
        const sentSignature = headers['X-Svc-Signature'] ?? '';
        let expected: string | null = null;
        if (!sentTs || !sentNonce || !sentSignature) expected = 'signature_required';
        else if (!/^\d{1,12}$/.test(sentTs)) expected = 'signature_invalid';
        else if (Math.abs(now - Number(sentTs)) > 300) expected = 'signature_expired';
        else if (!/^[\x21-\x7e]{8,64}$/.test(sentNonce)) expected = 'signature_invalid';
        else if (k.signature !== 'correct') expected = 'signature_invalid';
        else if (spent.has(sentNonce)) expected = 'nonce_reused';
        await exchange(w, {
          method,
          path,
          headers,
          ...(bodyText !== undefined ? { body: { kind: 'raw', contentType: 'application/json', bytes: bodyText } as Body } : {}),
          expect: expected === null ? expectNot(401) : expectError(401, expected),
        });
        if (expected === null) spent.add(sentNonce);
      }),
      params(RUNS.signing),
    );
  } finally {
    await closeWorld(w);
  }
});

/** The documented scheme, written out here rather than taken from the emulator: v1= hex HMAC-SHA256 of the canonical string. */
function documentedSignature(secret: string, timestamp: string, nonce: string, method: string, path: string, body: string): string {
  const digest = createHash('sha256').update(body).digest('hex');
  return `v1=${createHmac('sha256', secret).update(`${timestamp}\n${nonce}\n${method}\n${path}\n${digest}`).digest('hex')}`;
}

// ---------------------------------------------------------------------------------------------------------------
// The control API

fuzz(`control API reads: every GET with ids real and nasty and fuzzed list queries (${RUNS.adminReads} cases)`, async () => {
  await withWorld(async (w) => {
    const ids = fc.oneof(nastyId, fc.constantFrom(w.accountA, w.accountB, 'acct_demo', w.keyA, DEMO_KEY, w.requestId, w.deliveryId, ...w.ownTasks));
    const kind = fc.oneof(
      fc.constantFrom('/_emulator/health', '/_emulator/clock', '/_emulator/accounts', '/_emulator/scenarios'),
      queryArb('admin', '/_emulator/tasks', 'get').map((q) => `/_emulator/tasks${q}`),
      queryArb('admin', '/_emulator/records', 'get').map((q) => `/_emulator/records${q}`),
      queryArb('admin', '/_emulator/webhooks/deliveries', 'get').map((q) => `/_emulator/webhooks/deliveries${q}`),
      ids.map((id) => `/_emulator/accounts/${id}`),
      ids.map((id) => `/_emulator/accounts/${id}/ledger`),
      ids.map((id) => `/_emulator/keys/${id}`),
      ids.map((id) => `/_emulator/records/${id}`),
    );
    await check(
      fc.asyncProperty(kind, async (path) => {
        await exchange(w, { method: 'GET', path, headers: ADMIN });
      }),
      params(RUNS.adminReads),
    );
  });
});

fuzz(`control API writes: schema-derived bodies and their mutations on every POST and PATCH (${RUNS.adminWrites} cases)`, async () => {
  await withWorld(async (w) => {
    const account = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(w.accountA, w.accountB, 'acct_demo') }, { weight: 1, arbitrary: nastyId });
    const key = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(w.keyA, w.keyB) }, { weight: 1, arbitrary: nastyId });
    // The latest tasks, read when a case is drawn: queued ones keep coming (below) as steps finish them.
    const task = fc.oneof(
      { weight: 4, arbitrary: fc.nat().map((i) => w.ownTasks[w.ownTasks.length - 1 - (i % Math.min(6, w.ownTasks.length))] ?? '') },
      { weight: 1, arbitrary: fc.constant(w.foreignTask) },
      { weight: 1, arbitrary: nastyId },
    );
    // Refills come from an account the cases never name, so no case can make them fail.
    const refill = (await call(w.t, 'POST', '/_emulator/accounts', ADMIN, { points: '999999999.000' })).body as { id: string };
    const refillKey = ((await call(w.t, 'POST', `/_emulator/accounts/${refill.id}/keys`, ADMIN, {})).body as { key: string }).key;
    const delivery = fc.oneof({ weight: 3, arbitrary: fc.constant(w.deliveryId) }, { weight: 1, arbitrary: nastyId });
    const body = (name: string): fc.Arbitrary<unknown> => mutated(fromSchema('admin', component('admin', name)));
    const kind = fc.oneof(
      fc.record({ method: fc.constant<Verb>('POST'), path: fc.constant('/_emulator/clock/advance'), body: mutated(fc.record({ seconds: fc.oneof(fc.integer({ min: 0, max: 600 }), fc.constantFrom(0, -1, 31536000, 31536001, 0.5)) })) }),
      fc.record({ method: fc.constant<Verb>('POST'), path: fc.constant('/_emulator/clock/speed'), body: body('ClockSpeedRequest') }),
      fc.record({ method: fc.constant<Verb>('POST'), path: fc.constant('/_emulator/accounts'), body: body('CreateAccountRequest') }),
      fc.record({ method: fc.constant<Verb>('PATCH'), path: account.map((id) => `/_emulator/accounts/${id}`), body: body('AccountSettings') }),
      fc.record({ method: fc.constant<Verb>('POST'), path: account.map((id) => `/_emulator/accounts/${id}/keys`), body: body('KeySettings') }),
      fc.record({ method: fc.constant<Verb>('PATCH'), path: key.map((id) => `/_emulator/keys/${id}`), body: body('KeySettings') }),
      fc.record({ method: fc.constant<Verb>('POST'), path: account.map((id) => `/_emulator/accounts/${id}/webhook`), body: body('SetWebhookRequest') }),
      fc.record({ method: fc.constant<Verb>('POST'), path: task.map((id) => `/_emulator/tasks/${id}/complete`), body: body('CompleteTaskRequest') }),
      fc.record({ method: fc.constant<Verb>('POST'), path: task.map((id) => `/_emulator/tasks/${id}/fail`), body: body('FailTaskRequest') }),
      fc.record({ method: fc.constant<Verb>('POST'), path: fc.constant('/_emulator/scenarios'), body: body('ScenarioFile') }),
      fc.record({ method: fc.constant<Verb>('POST'), path: task.map((id) => `/_emulator/tasks/${id}/advance`), body: fc.constant(undefined) }),
      fc.record({ method: fc.constant<Verb>('POST'), path: task.map((id) => `/_emulator/tasks/${id}/cancel`), body: fc.constant(undefined) }),
      fc.record({ method: fc.constant<Verb>('POST'), path: account.map((id) => `/_emulator/accounts/${id}/webhook/test`), body: fc.constant(undefined) }),
      fc.record({ method: fc.constant<Verb>('POST'), path: account.map((id) => `/_emulator/accounts/${id}/webhook/rotate`), body: fc.constant(undefined) }),
      fc.record({ method: fc.constant<Verb>('POST'), path: delivery.map((id) => `/_emulator/webhooks/deliveries/${id}/resend`), body: fc.constant(undefined) }),
    );
    // Tasks get used up (finished); keep some queued ones coming so the steps have something to act on.
    let submitted = 0;
    await check(
      fc.asyncProperty(kind, async (k) => {
        if (submitted++ % 20 === 0) {
          const res = await request(w.t.emulator.app).post('/v1/tasks').set({ Authorization: `Bearer ${refillKey}` }).send(socialNote());
          if (res.status === 200) w.ownTasks.push((res.body as { id: string }).id);
        }
        await exchange(w, { method: k.method, path: k.path, headers: ADMIN, ...(k.body !== undefined ? { body: { kind: 'json', value: k.body } as Body } : {}) });
      }),
      params(RUNS.adminWrites),
    );
  });
});

fuzz(`control API without its token: 401 unauthorized whatever the body; health needs none (${RUNS.adminAuth} cases)`, async () => {
  await withWorld(async (w) => {
    const routes: [Verb, string][] = [
      ['GET', '/_emulator/clock'], ['POST', '/_emulator/clock/advance'], ['POST', '/_emulator/clock/speed'], ['POST', '/_emulator/accounts'], ['GET', '/_emulator/accounts'],
      ['GET', `/_emulator/accounts/${w.accountA}`], ['PATCH', `/_emulator/accounts/${w.accountA}`], ['GET', '/_emulator/tasks'],
      ['POST', `/_emulator/tasks/${w.ownTasks[0] ?? ''}/complete`], ['POST', '/_emulator/scenarios'], ['PATCH', `/_emulator/keys/${w.keyA}`],
      ['GET', '/_emulator/records'], ['GET', '/_emulator/webhooks/deliveries'], ['POST', '/_emulator/reset'], ['GET', '/_emulator/nope'],
    ];
    const kind = fc.record({
      route: fc.constantFrom(...routes),
      auth: fc.constantFrom<Record<string, string>>({}, { Authorization: 'Bearer wrong' }, { Authorization: `Bearer ${ADMIN_TOKEN}x` }, { Authorization: ADMIN_TOKEN }, { Authorization: `Basic ${ADMIN_TOKEN}` }, { Authorization: `Bearer ${DEMO_KEY}` }, { Authorization: 'Bearer __proto__' }, { 'x-api-key': ADMIN_TOKEN }),
      body: fc.oneof(
        fc.constant(undefined),
        fc.jsonValue({ maxDepth: 2 }).map((value): Body => ({ kind: 'json', value })),
        fc.constantFrom(...MALFORMED).map((text): Body => ({ kind: 'raw', contentType: 'application/json', bytes: text })),
        fc.constantFrom('text/plain', 'application/xml', 'application/json; charset=latin1').map((type): Body => ({ kind: 'raw', contentType: type, bytes: '{}' })),
      ),
    });
    await check(
      fc.asyncProperty(kind, async (k) => {
        const [method, path] = k.route;
        await exchange(w, { method, path, headers: k.auth, ...(k.body ? { body: k.body } : {}), expect: expectError(401, 'unauthorized') });
      }),
      params(RUNS.adminAuth),
    );
    await once(w, { method: 'GET', path: '/_emulator/health', headers: {}, expect: expectStatus(200) });
  });
});

fuzz(`POST /_emulator/clock/speed on a real clock: speeds in and out of range, junk bodies; the clock reads back as set (${RUNS.clockSpeed} cases)`, async () => {
  // A bare emulator on the real clock, with nothing scheduled that a faster clock could change under a case.
  const logs: string[] = [];
  const t = await startEmulator({ clock: 'real', publicUrl: PUBLIC_URL, log: (message) => void logs.push(message), resolveHost: () => Promise.resolve([]), send: () => Promise.resolve({ status: 200, excerpt: 'ok' }) });
  await t.emulator.listen(0);
  if (t.emulator.server) servers.set(t.emulator.app, t.emulator.server);
  const w = { t, logs } as unknown as World;
  try {
    const speed = fc.oneof(
      { weight: 3, arbitrary: fromSchema('admin', component('admin', 'ClockSpeedRequest')) },
      { weight: 2, arbitrary: fc.constantFrom(0, -1, -0, 5e-324, 1e-9, 0.5, 1, 1_000_000, 1_000_000.5, 1e308, '2', null, true, [], {}).map((v) => ({ speed: v })) },
      { weight: 1, arbitrary: mutated(fc.constant({ speed: 2 })) },
    );
    await check(
      fc.asyncProperty(speed, async (body) => {
        const res = await exchange(w, { method: 'POST', path: '/_emulator/clock/speed', headers: ADMIN, body: { kind: 'json', value: body } });
        const asked = isObject(body) ? body['speed'] : undefined;
        // A speed in range is taken, unless the body around it nests past the limit every body has (400).
        const valid = typeof asked === 'number' && asked > 0 && asked <= 1_000_000 && containerDepth(body) <= MAX_BODY_DEPTH;
        await exchange(w, {
          method: 'GET',
          path: '/_emulator/clock',
          headers: ADMIN,
          expect: (clock) => {
            const now = (clock.body as { speed?: unknown }).speed;
            if (valid && res.status !== 200) return [`speed ${String(asked)} was refused with ${res.status}`];
            if (!valid && res.status === 200) return [`speed ${excerpt(asked)} was accepted`];
            return res.status === 200 && now !== asked ? [`the clock reads speed ${String(now)} after ${String(asked)} was set`] : [];
          },
        });
      }),
      params(RUNS.clockSpeed),
    );
  } finally {
    await closeWorld(w);
  }
});

// ---------------------------------------------------------------------------------------------------------------
// Inputs that can take a whole process down: against a child process with a small heap

const BIN = new URL('../../bin/svc-emulator.js', import.meta.url).pathname;
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

interface Child {
  base: string;
  exit: () => string | null;
  stderr: () => string;
}

async function startChild(): Promise<Child> {
  const child = spawn(
    process.execPath,
    ['--max-old-space-size=192', BIN, 'start', '--port', '0', '--memory', '--clock', 'manual', '--admin-token', ADMIN_TOKEN, '--log-level', 'error'],
    { stdio: 'pipe' },
  );
  children.push(child);
  let out = '';
  let err = '';
  let exited: string | null = null;
  child.stderr?.on('data', (chunk: Buffer) => (err = (err + chunk.toString()).slice(-4000)));
  child.on('exit', (code, signal) => (exited = `exited with ${code ?? signal}`));
  const base = await new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const found = /listening on (http:\/\/[^\s]+)/.exec(out)?.[1];
      if (found && /admin token/.test(out)) resolve(found);
    });
    child.on('exit', () => reject(new Error(`the emulator did not start: ${out}${err}`)));
  });
  return { base, exit: () => exited, stderr: () => err };
}

function multipartBytes(boundary: string, filename: string, type: string, content: Buffer, fields: [string, string][]): Buffer {
  const parts = fields.map(([n, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${n}"\r\n\r\n${v}\r\n`).join('');
  return Buffer.concat([
    Buffer.from(`${parts}--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: ${type}\r\n\r\n`),
    content,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
}

fuzz(`crash-class inputs against a separate process (192 MB heap): truncated and mangled multipart, schema bombs in text bodies; the process answers and stays up (${RUNS.crashes} cases)`, async () => {
  let child = await startChild();
  const bomb = fc.letrec((tie) => ({
    node: fc.oneof(
      { maxDepth: 3, depthSize: 'small' },
      fc.constant<unknown>({ type: 'string' }),
      fc.record({ type: fc.constant('array'), minItems: fc.oneof(fc.integer({ min: 0, max: 50 }), fc.constantFrom(1e5, 1e6, 1e7, 1e8, 2 ** 31 - 1, 2 ** 32 - 1, 2 ** 32)), items: tie('node') }),
      fc.record({ type: fc.constant('object'), properties: fc.dictionary(fc.constantFrom('a', 'b', 'c'), tie('node'), { maxKeys: 3 }) }),
    ),
  })).node;
  const kind = fc.oneof(
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant('multipart' as const),
        content: fc.uint8Array({ maxLength: 512 }).map((b) => Buffer.from(b)),
        fields: fc.array(fc.tuple(fc.constantFrom('duration', 'width', 'x'), fc.constantFrom('5', 'abc', '')), { maxLength: 2 }),
        mangle: fc.constantFrom('truncate', 'truncate', 'drop-close', 'junk-header', 'wrong-boundary', 'none'),
        at: fc.nat(),
        junk: fc.uint8Array({ minLength: 1, maxLength: 16 }).map((b) => Buffer.from(b)),
      }),
    },
    { weight: 2, arbitrary: fc.record({ kind: fc.constantFrom('json-schema' as const, 'tool' as const), schema: bomb }) },
  );
  try {
    await check(
      fc.asyncProperty(kind, async (k) => {
        if (child.exit() !== null) child = await startChild();
        let path: string;
        let type: string;
        let payload: Buffer;
        if (k.kind === 'multipart') {
          const boundary = 'fuzzboundary';
          const full = multipartBytes(boundary, 'a.mp4', 'video/mp4', k.content, k.fields);
          payload =
            k.mangle === 'truncate'
              ? full.subarray(0, k.at % full.length)
              : k.mangle === 'drop-close'
                ? full.subarray(0, full.length - `--${boundary}--\r\n`.length)
                : k.mangle === 'junk-header'
                  ? Buffer.concat([full.subarray(0, 20), k.junk, full.subarray(20)])
                  : full;
          path = '/v1/files';
          type = `multipart/form-data; boundary=${k.mangle === 'wrong-boundary' ? 'other' : boundary}`;
        } else {
          path = '/v1/chat/completions';
          type = 'application/json';
          const base = { model: 'svc-text-lite', messages: [{ role: 'user', content: 'x' }] };
          payload = Buffer.from(
            JSON.stringify(
              k.kind === 'json-schema'
                ? { ...base, response_format: { type: 'json_schema', json_schema: { name: 'x', schema: k.schema } } }
                : { ...base, tools: [{ type: 'function', function: { name: 'f', parameters: k.schema } }], tool_choice: 'required' },
            ),
          );
        }
        const summary = `POST ${path} ${type} ${excerpt(payload.toString('latin1'), 300)}`;
        let status: number | string;
        try {
          const res = await fetch(`${child.base}${path}`, { method: 'POST', headers: { ...V1, 'Content-Type': type }, body: payload, signal: AbortSignal.timeout(15_000) });
          status = res.status;
          await res.arrayBuffer();
        } catch (err) {
          status = `no answer (${String((err as Error).cause ?? err)})`;
        }
        let alive = false;
        try {
          alive = (await fetch(`${child.base}/_emulator/health`, { signal: AbortSignal.timeout(5_000) })).status === 200;
        } catch {
          alive = false;
        }
        if (typeof status !== 'number' || status >= 500 || !alive) {
          await new Promise((resolve) => setTimeout(resolve, 200));
          throw new Error(`${summary}\n→ ${status}; the process ${alive ? 'is up' : `is down (${child.exit() ?? 'not answering'})`}\n  stderr: ${child.stderr().slice(-600)}`);
        }
      }),
      // A dead process cannot shrink: report the first failure as found.
      params(RUNS.crashes, { endOnFailure: true }),
    );
  } finally {
    for (const c of children.splice(0)) c.kill('SIGKILL');
  }
});

// ---------------------------------------------------------------------------------------------------------------
// Last: reset, and the count

fuzz(`POST /_emulator/reset, last: with and without its token, with junk bodies (${RUNS.reset} cases)`, async () => {
  await withWorld(async (w) => {
    await check(
      fc.asyncProperty(fc.boolean(), fc.option(fc.jsonValue({ maxDepth: 2 }), { nil: undefined }), async (authorized, value) => {
        await exchange(w, {
          method: 'POST',
          path: '/_emulator/reset',
          headers: authorized ? ADMIN : {},
          ...(value !== undefined ? { body: { kind: 'json', value } as Body } : {}),
          expect: authorized ? () => [] : expectError(401, 'unauthorized'),
        });
      }),
      params(RUNS.reset),
    );
    // After a reset the demo key works again.
    await once(w, { method: 'GET', path: '/v1/tasks', headers: V1, expect: expectStatus(200) });
  });
});

it(`ran at least 10,000 cases in total (planned: ${PLANNED})`, () => {
  expect(PLANNED).toBeGreaterThanOrEqual(10_000);
  expect(tally.cases).toBeGreaterThanOrEqual(10_000);
});

const RESULTS_DIR = new URL('../../test-results/', import.meta.url);
afterAll(() => {
  const summary = { cases: tally.cases, failed: tally.failed, seed: SEED, planned: PLANNED };
  console.log(`fuzz: ${summary.cases} cases, ${summary.failed} failed (seed ${SEED})`);
  if (existsSync(RESULTS_DIR)) writeFileSync(new URL('fuzz.json', RESULTS_DIR), `${JSON.stringify(summary)}\n`);
});
