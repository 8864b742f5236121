import fc from 'fast-check';
import { socialNote } from '../../support/harness.ts';
import type { DocumentName } from '../../support/spec-check.ts';
import { ADMIN, isObject, pointer } from './documents.ts';
import type { Schema } from './documents.ts';
import type { Verb, World } from './exchange.ts';
import { fromSchema } from './schema-arbitraries.ts';
import { asA } from './world.ts';

// Shared pieces of cases: nasty ids and queries, scenario headers, and every endpoint that takes a JSON body

/** Path segments that must never reach a file, a task or a record they do not name. */
export const NASTY_IDS = [
  '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', '..', '.', '...', '..%2F..%2Fetc%2Fpasswd',
  '%2e%2e%2f%2e%2e%2fpackage.json', '..%5C..%5Cpackage.json', '%2E%2E', '%00', '%0d%0aX-Injected:%201',
  'file_..%2F..%2Fetc%2Fpasswd', '%E0%A4%A', '%', '%ZZ', '%FF', '%C0%AF', '%ED%A0%80', 'T261123090000AAAAAA',
  `T${'9'.repeat(200)}`, 'a'.repeat(5000), encodeURIComponent('日本語'), encodeURIComponent('é'), '%20', '+', 'null',
  'undefined', '-1', '0', '1e3', 'acct_demo%00', 'sk-emulator-demo%20',
];
export const nastyId = fc.constantFrom(...NASTY_IDS);

export const NASTY_QUERY = ['', '0', '-1', '1.5', '1e2', ' 1', '1 ', 'abc', '101', '1001', '1000001', '99999999999999999999', 'NaN', 'Infinity', '__proto__', '%', '%zz', '%E0%A4%A', '日本', 'a'.repeat(300), 'queued', 'social-notes-data'];

/** A query string for an operation, from its documented query parameters, plus strays and repeats. */
export function queryArb(doc: DocumentName, path: string, method: string): fc.Arbitrary<string> {
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
export const scenarioHeader = fc.option(fc.constantFrom('rejected', 'text-rejected', '__proto__', 'constructor', 'nope', '', ' ', 'default', 'instant', 'a'.repeat(300)), { nil: undefined });

/** Visible ASCII, the characters Idempotency-Key and X-Svc-Nonce are made of. */
export const visible = fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c));

/** Every endpoint that takes a JSON body, with a body it accepts. */
export interface JsonEndpoint {
  method: Verb;
  path: (w: World) => string;
  /** A body this endpoint accepts. */
  valid: (w: World) => Record<string, unknown>;
}
export const CHAT_BODY = { model: 'svc-text-lite', messages: [{ role: 'user', content: 'Say hello.' }] };
export const RESPONSES_BODY = { model: 'svc-text-lite', input: 'Say hello.' };
export const MESSAGES_BODY = { model: 'svc-text-lite', max_tokens: 16, messages: [{ role: 'user', content: 'Say hello.' }] };
export const JSON_ENDPOINTS: JsonEndpoint[] = [
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
export const headersFor = (w: World, path: string): Record<string, string> => (path.startsWith('/_emulator') ? ADMIN : asA(w));
export const endpointArb = fc.constantFrom(...JSON_ENDPOINTS);

/** Texts that are not JSON, and JSON that is no object: every JSON endpoint refuses both (400 bad_request). */
export const MALFORMED = ['{', '}', '{"a":}', '{"a":1,}', "{'a':1}", '{"a":NaN}', '{"a":Infinity}', '{"a":1} x', '{"a":1}{"b":2}', '\uFEFF{}', '{"a":"\\x"}', '{"a":01}', '{"a":.5}', '{"a":"\u0001"}', ' ', '{"a" 1}', '{a:1}', '[', '{"a":[1,2}', 'nul', 'tru', '/* c */ {}', '{"a":1}\u0000'];
export const NON_OBJECTS = ['[]', '[{}]', '"str"', '123', 'true', 'null', '-0', '1e999', '""', `[${'0,'.repeat(1000)}0]`];
