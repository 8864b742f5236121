import type { Server } from 'node:http';
import fc from 'fast-check';
import request from 'supertest';
import type { Response, Test } from 'supertest';
import type { TestEmulator } from '../../support/harness.ts';
import { responseProblems } from '../../support/spec-check.ts';
import type { DocumentName } from '../../support/spec-check.ts';
import { exportedVersion, recordsBesideCalls } from '../../support/state.ts';
import { isObject } from './documents.ts';
import { toJsonText } from './raw-json.ts';

/**
 * Requests, and what every answer must satisfy: be below 500; carry `X-Request-Id` (`req_` + 24); be an error
 * body in its endpoint group's shape whose `request_id` is that header; match the OpenAPI documents
 * (`responseProblems`); leave the prototypes alone; leave the store serializable, and unchanged when the request
 * was refused (call records and the clock position excepted). A case can predict more (`expect`).
 */

export type Verb = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
export type Body =
  | { kind: 'json'; value: unknown; contentType?: string }
  | { kind: 'raw'; bytes: Buffer | string; contentType: string | null; encoding?: string }
  | { kind: 'multipart'; fields: [string, string][]; files: { field: string; bytes: Buffer; filename: string; contentType: string }[] };

export interface Case {
  method: Verb;
  path: string;
  headers: Record<string, string>;
  body?: Body;
  /** Further expectations of this case; each string is a problem. */
  expect?: (res: Response) => string[];
}

export type Group = 'general' | 'openai' | 'messages';
const pathnameOf = (path: string): string => path.split('?')[0] ?? path;
/** The endpoint group of a path, as the documents name paths: exactly (a case variant is an unknown path). */
export function groupOf(path: string): Group {
  const p = pathnameOf(path);
  if (p.startsWith('/v1/chat/completions') || p.startsWith('/v1/responses')) return 'openai';
  if (p.startsWith('/v1/messages')) return 'messages';
  return 'general';
}
const docOf = (path: string): DocumentName => (pathnameOf(path).startsWith('/_emulator') ? 'admin' : 'service');
export const isFilesPath = (path: string): boolean => pathnameOf(path).startsWith('/files/');

function errorOf(body: unknown): Record<string, unknown> | undefined {
  return isObject(body) && isObject(body['error']) ? body['error'] : undefined;
}
export const codeOf = (res: Response): unknown => errorOf(res.body)?.['code'];

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

export function excerpt(value: unknown, max = 300): string {
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

export function open(app: TestEmulator['emulator']['app'], method: Verb, path: string): Test {
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

/** The last snapshot of each emulator, with the write count it was taken at. */
const snapshots = new WeakMap<TestEmulator, { driver: unknown; version: number; text: string | null }>();

/**
 * The store as the brief compares it: call records and the clock position left out; null when it cannot be
 * written. Read again only when a table it holds may have been written since the last read: reading it whole
 * before and after every case made the fuzz quadratic in the tasks its cases create.
 */
function storeSnapshot(t: TestEmulator): string | null {
  // A reset or an import may bring another connection, whose count starts again.
  const driver = t.emulator.internals.store.driver;
  const version = exportedVersion(t.emulator);
  const last = snapshots.get(t);
  if (last?.driver === driver && last.version === version) return last.text;
  let text: string | null;
  try {
    text = recordsBesideCalls(t.emulator);
  } catch {
    text = null;
  }
  snapshots.set(t, { driver, version, text });
  return text;
}

function firstDifference(a: string, b: string): string {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return `at ${i}: before …${a.slice(Math.max(0, i - 80), i + 80)}… after …${b.slice(Math.max(0, i - 80), i + 80)}…`;
}

/** One listening server per emulator: supertest would otherwise open and close a server for every request. */
export const servers = new Map<unknown, Server>();

export interface World {
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
export async function exchange(w: World, c: Case): Promise<Response> {
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

export const expectStatus =
  (...statuses: number[]) =>
  (res: Response): string[] =>
    statuses.includes(res.status) ? [] : [`expected ${statuses.join(' or ')}, got ${res.status} ${String(codeOf(res) ?? '')}`];
export const expectError =
  (status: number, code: string) =>
  (res: Response): string[] =>
    res.status === status && codeOf(res) === code ? [] : [`expected ${status} ${code}, got ${res.status} ${String(codeOf(res) ?? '')}`];
export const expectNot =
  (status: number) =>
  (res: Response): string[] =>
    res.status !== status ? [] : [`did not expect ${status} (${String(codeOf(res) ?? '')})`];
