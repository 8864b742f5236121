import { expect, it } from 'vitest';
import { createAjv, loadDocument, resolvePointer } from '../../src/contract/index.ts';
import type { DocumentName } from '../../src/contract/index.ts';

/**
 * The documents say which limits come from the reference and which the emulator chose: a chosen one carries an
 * `x-emulator-defined` sentence giving the reason. They also keep points non-negative wherever the reference's
 * amounts cannot be negative, leaving only an account's balance (`Balance` in admin.yaml) signed.
 */
const documents = { service: loadDocument('service'), admin: loadDocument('admin') };
const ajv = createAjv(documents);
const at = (document: DocumentName, pointer: string): Record<string, unknown> =>
  resolvePointer(documents[document], pointer) as Record<string, unknown>;
const valid = (document: DocumentName, schema: string, value: unknown): boolean =>
  ajv.validate({ $ref: `${document}.yaml#/components/schemas/${schema}` }, value);

it.each([
  ['the largest list page', '#/components/parameters/ListPage/schema', 'maximum', 1_000_000],
  ['chat stop sequences', '#/components/schemas/ChatCompletionRequest/properties/stop', 'maxItems 4', undefined],
  ['Messages temperature', '#/components/schemas/MessageRequest/properties/temperature', 'maximum', 1],
  ['chat temperature', '#/components/schemas/ChatCompletionRequest/properties/temperature', 'maximum', 2],
  ['Responses temperature', '#/components/schemas/ResponseRequest/properties/temperature', 'maximum', 2],
  ['503 on chat and Responses calls', '#/components/responses/TextServiceUnavailable', 'no 503', undefined],
  ['503 on Messages calls', '#/components/responses/MessagesServiceUnavailable', 'no 503', undefined],
])('marks %s as emulator-defined, with its reason', (_name, pointer, wording, maximum) => {
  const node = at('service', pointer);
  const note = node['x-emulator-defined'];
  expect(typeof note).toBe('string');
  expect(String(note)).toMatch(new RegExp(`${wording}|reference`));
  expect((note as string).length).toBeGreaterThan(60);
  if (maximum !== undefined) expect(node['maximum']).toBe(maximum);
});

it('gives the list page size the reference states, citing it rather than marking it emulator-defined', () => {
  const limit = at('service', '#/components/parameters/ListLimit');
  expect(limit['schema']).toMatchObject({ minimum: 1, maximum: 100, default: 20 });
  expect(limit['x-emulator-defined']).toBeUndefined();
  expect(String(limit['description'])).toContain('"Limits"');
});

it('keeps chat stop to at most 4 sequences', () => {
  expect(valid('service', 'ChatCompletionRequest', { model: 'svc-text-pro', messages: [{ role: 'user', content: 'hi' }], stop: ['a', 'b', 'c', 'd'] })).toBe(true);
  expect(valid('service', 'ChatCompletionRequest', { model: 'svc-text-pro', messages: [{ role: 'user', content: 'hi' }], stop: ['a', 'b', 'c', 'd', 'e'] })).toBe(false);
});

it('points the text endpoints\' 503 answers at the emulator-defined responses', () => {
  const refs = (['/v1/chat/completions', '/v1/responses', '/v1/messages'] as const).map(
    (path) => ((documents.service.paths?.[path]?.post?.responses?.['503'] ?? {}) as { $ref?: string }).$ref,
  );
  expect(refs).toEqual([
    '#/components/responses/TextServiceUnavailable',
    '#/components/responses/TextServiceUnavailable',
    '#/components/responses/MessagesServiceUnavailable',
  ]);
});

it.each([
  ['service', 'Points'],
  ['admin', 'Points'],
] as [DocumentName, string][])('%s.yaml %s: takes zero and positive amounts, refuses a minus sign', (document, schema) => {
  expect(valid(document, schema, '0.000')).toBe(true);
  expect(valid(document, schema, '1188.000')).toBe(true);
  expect(valid(document, schema, '-40.000')).toBe(false);
  expect(valid(document, schema, '-0.000')).toBe(false);
  expect(valid(document, schema, '40.00')).toBe(false);
});

it('refuses negative task points in a task object', () => {
  const task = {
    id: 'T261123090000ABC123',
    object: 'task',
    model: 'social-notes-data',
    status: 'succeeded',
    created_at: '2026-11-23T09:00:00+08:00',
    started_at: '2026-11-23T09:00:01+08:00',
    finished_at: '2026-11-23T09:00:02+08:00',
    input: { mode: 'note', note: 'n', agree: true },
    points: { frozen: '40.000', charged: '40.000', refunded: '0.000' },
    output: { text: 'notes', files: [] },
    error: null,
    metadata: {},
  };
  expect(valid('service', 'TaskPoints', task.points)).toBe(true);
  expect(valid('service', 'TaskPoints', { ...task.points, refunded: '-1.000' })).toBe(false);
  expect(valid('admin', 'StateTaskObject', task)).toBe(true);
  expect(valid('admin', 'StateTaskObject', { ...task, points: { ...task.points, charged: '-40.000' } })).toBe(false);
});

it('lets an account balance go below zero (a settlement collected beyond the freeze), and nothing else', () => {
  expect(valid('admin', 'Balance', '-100.000')).toBe(true);
  expect(valid('admin', 'Balance', '100000.000')).toBe(true);
  const account = at('admin', '#/components/schemas/Account')['properties'] as Record<string, { $ref?: string }>;
  const stored = at('admin', '#/components/schemas/StateAccount')['properties'] as Record<string, { $ref?: string }>;
  expect(account['available']?.$ref).toBe('#/components/schemas/Balance');
  expect(stored['available']?.$ref).toBe('#/components/schemas/Balance');
  for (const field of ['frozen', 'charged']) {
    expect(account[field]?.$ref, field).toBe('#/components/schemas/Points');
    expect(stored[field]?.$ref, field).toBe('#/components/schemas/Points');
  }
});

it('types a task\'s webhook_url as a string, null included among what it refuses', () => {
  const body = { model: 'social-notes-data', input: { mode: 'note', note: 'n', agree: true } };
  expect(valid('service', 'SubmitTaskCommon', { ...body, webhook_url: 'https://hooks.example.com/cb' })).toBe(true);
  expect(valid('service', 'SubmitTaskCommon', body)).toBe(true);
  expect(valid('service', 'SubmitTaskCommon', { ...body, webhook_url: null })).toBe(false);
});
