import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { parse } from 'yaml';
import { PARAMETER_TABLES } from './openapi-parameter-tables.ts';

/**
 * The document is derived from the service's reference by hand; these tests hold it to the parameter tables as
 * the project states them (openapi-parameter-tables.ts) and keep it whole (every component reachable, every /v1 answer documenting X-Request-Id).
 */
type Schema = Record<string, unknown>;
const doc = parse(readFileSync(new URL('../../openapi/service.yaml', import.meta.url), 'utf8')) as Schema;
const schemas = (doc['components'] as Record<string, Record<string, Schema>>)['schemas'] as Record<string, Schema>;

/** A model's input schema, found as a tool finds it: the discriminator's branch for the model, then its `input`. */
const branches = ((schemas['SubmitTaskRequest']?.['discriminator'] as Schema | undefined)?.['mapping'] ?? {}) as Record<string, string>;
const component = (ref: unknown): Schema => schemas[String(ref).split('/').pop() ?? ''] ?? {};
const branchOf = (model: string): Schema => component(branches[model]);
const modelSchema = (model: string): Schema => {
  const [byInput] = (branchOf(model)['anyOf'] ?? []) as { properties: Record<string, Schema> }[];
  return component(byInput?.properties['input']?.['$ref']);
};
const resolve = (prop: Schema): Schema => {
  const ref = prop['$ref'];
  return typeof ref === 'string' ? { ...schemas[ref.split('/').pop() ?? ''], ...prop } : prop;
};

const models = ['social-notes-data', 'video-gen-2.0-fast', 'avatar-photo'];

it.each(models)('%s: has every field of the parameter table, with its type', (model) => {
  const rows = PARAMETER_TABLES[model] ?? [];
  expect(rows.length).toBeGreaterThan(5);
  const properties = modelSchema(model)['properties'] as Record<string, Schema>;
  expect(Object.keys(properties).sort()).toEqual(rows.map((r) => r.field).sort());
  for (const row of rows) {
    const prop = resolve(properties[row.field] ?? {});
    const expected = row.type === 'file address' || row.type === 'string' ? 'string' : row.type.startsWith('array') ? 'array' : row.type;
    expect(prop['type'], row.field).toBe(expected);
    if (row.type.includes('file address')) {
      const target = row.type.startsWith('array') ? (prop['items'] as Schema) : (properties[row.field] as Schema);
      expect(target['$ref'], row.field).toBe('#/components/schemas/FileAddress');
    }
  }
});

it.each(models)('%s: has the enums, defaults, ranges, lengths and required fields of the parameter table', (model) => {
  const schema = modelSchema(model);
  const properties = schema['properties'] as Record<string, Schema>;
  for (const row of PARAMETER_TABLES[model] ?? []) {
    const prop = resolve(properties[row.field] ?? {});
    if (row.values) expect(prop['enum'], row.field).toEqual(row.values);
    if (row.must) expect(prop['const'], row.field).toBe(true);
    expect(prop['default'], row.field).toEqual(row.default);
    if (row.range) expect([prop['minimum'], prop['maximum']], row.field).toEqual(row.range);
    if (row.maxLength !== undefined) expect(prop['maxLength'], row.field).toBe(row.maxLength);
    if (row.minLength !== undefined) expect(prop['minLength'], row.field).toBe(row.minLength);
    if (row.maxItems !== undefined) expect(prop['maxItems'], row.field).toBe(row.maxItems);
    if (row.required) expect(schema['required'], row.field).toContain(row.field);
    else expect((schema['required'] as string[] | undefined) ?? [], row.field).not.toContain(row.field);
  }
});

it.each([
  ['social-notes-data', 600],
  ['video-gen-2.0-fast', 3600],
  ['avatar-photo', 3600],
])('%s: states the maximum processing time (%i s)', (model, seconds) => {
  expect(modelSchema(model)['x-max-processing-seconds']).toBe(seconds);
});

it('makes SubmitTaskRequest one branch per model: model a const, input or params its input schema', () => {
  const submit = schemas['SubmitTaskRequest'] ?? {};
  const common = (schemas['SubmitTaskCommon']?.['properties'] ?? {}) as Record<string, Schema>;
  expect(Object.keys(branches).sort()).toEqual([...models].sort());
  expect((submit['oneOf'] as Schema[]).map((b) => b['$ref']).sort()).toEqual(Object.values(branches).sort());
  for (const model of models) {
    const properties = branchOf(model)['properties'] as Record<string, Schema>;
    expect(properties['model']?.['const']).toBe(model);
    expect(properties['webhook_url']).toEqual(common['webhook_url']);
    expect(properties['metadata']).toEqual(common['metadata']);
    const [byInput, byParams] = branchOf(model)['anyOf'] as { required: string[]; properties: Record<string, Schema> }[];
    expect(byInput?.required).toEqual(['input']);
    expect(byParams?.required).toEqual(['params']);
    expect(byParams?.properties['params']).toEqual(byInput?.properties['input']);
  }
});

it('lists the text models and their output maximums as the fixtures define them', () => {
  const fixtures = JSON.parse(readFileSync(new URL('../../fixtures/text-models.json', import.meta.url), 'utf8')) as {
    models: { id: string; max_output_tokens: number }[];
  };
  expect(schemas['TextModelId']?.['enum']).toEqual(fixtures.models.map((m) => m.id));
  const caps = { ChatCompletionRequest: ['max_tokens', 'max_completion_tokens'], ResponseRequest: ['max_output_tokens'], MessageRequest: ['max_tokens'] };
  for (const [name, fields] of Object.entries(caps)) {
    const rules = schemas[name]?.['allOf'] as { if: Schema; then: Schema }[];
    const stated = rules.map((rule) => ({
      id: ((rule.if['properties'] as Record<string, Schema>)['model'] ?? {})['const'],
      caps: fields.map((f) => ((rule.then['properties'] as Record<string, Schema>)[f] ?? {})['maximum']),
    }));
    expect(stated, name).toEqual(fixtures.models.map((m) => ({ id: m.id, caps: fields.map(() => m.max_output_tokens) })));
  }
});

it('reaches every component from the paths, the webhooks or an x- reference', () => {
  const text = JSON.stringify({ paths: doc['paths'], webhooks: doc['webhooks'] });
  const reached = new Set<string>();
  const queue = [...text.matchAll(/#\/components\/(\w+)\/([\w.-]+)/g)].map((m) => `${m[1]}/${m[2]}`);
  const components = doc['components'] as Record<string, Record<string, unknown>>;
  for (let next = queue.shift(); next; next = queue.shift()) {
    if (reached.has(next)) continue;
    reached.add(next);
    const [kind = '', name = ''] = next.split('/');
    const body = JSON.stringify(components[kind]?.[name] ?? {});
    queue.push(...[...body.matchAll(/#\/components\/(\w+)\/([\w.-]+)/g)].map((m) => `${m[1]}/${m[2]}`));
  }
  const all = Object.entries(components)
    .filter(([kind]) => kind !== 'securitySchemes')
    .flatMap(([kind, entries]) => Object.keys(entries).map((name) => `${kind}/${name}`));
  expect(all.filter((name) => !reached.has(name))).toEqual([]);
});

it('documents X-Request-Id on every answer of every /v1 operation', () => {
  const components = doc['components'] as Record<string, Record<string, Schema>>;
  const missing: string[] = [];
  for (const [path, item] of Object.entries(doc['paths'] as Record<string, Record<string, Schema>>)) {
    for (const [method, operation] of Object.entries(item)) {
      for (const [status, raw] of Object.entries(operation['responses'] as Record<string, Schema>)) {
        const ref = raw['$ref'];
        const response = typeof ref === 'string' ? (components['responses']?.[ref.split('/').pop() ?? ''] ?? {}) : raw;
        const headers = (response['headers'] ?? {}) as Record<string, unknown>;
        if (!('X-Request-Id' in headers)) missing.push(`${method.toUpperCase()} ${path} ${status}`);
      }
    }
  }
  expect(missing).toEqual([]);
});

it('covers every endpoint of the reference', () => {
  const paths = Object.keys(doc['paths'] as object);
  expect(paths.sort()).toEqual(
    [
      '/v1/tasks',
      '/v1/tasks/{id}',
      '/v1/tasks/{id}/cancel',
      '/v1/files',
      '/v1/models',
      '/v1/models/{id}',
      '/v1/pricing',
      '/v1/chat/completions',
      '/v1/responses',
      '/v1/messages',
    ].sort(),
  );
  expect(Object.keys(doc['webhooks'] as object).sort()).toEqual(['task.canceled', 'task.failed', 'task.succeeded', 'webhook.test']);
});

it('leaves the X-Svc-* headers free in the schema (a key without signing ignores them) and states their form in x-when-signing', () => {
  const parameters = (doc['components'] as Record<string, Record<string, Schema>>)['parameters'] ?? {};
  for (const name of ['SvcTimestamp', 'SvcNonce', 'SvcSignature']) {
    const parameter = parameters[name] ?? {};
    expect(parameter['schema'], name).toEqual({ type: 'string' });
    expect((parameter['x-when-signing'] as Schema | undefined)?.['pattern'], name).toEqual(expect.any(String));
    expect(String(parameter['description']), name).toMatch(/without signing/);
  }
});

it('makes every file record field present, those that do not apply as null (width, height, duration, cover_url)', () => {
  const record = schemas['FileRecord'] ?? {};
  for (const field of ['width', 'height', 'duration', 'cover_url']) {
    expect(record['required'], field).toContain(field);
    expect(((record['properties'] as Record<string, Schema>)[field] ?? {})['type'], field).toContain('null');
  }
});

it('lets a task id path take any string: a long id is a task that does not exist (404), not a malformed request', () => {
  const parameters = (doc['components'] as Record<string, Record<string, Schema>>)['parameters'] ?? {};
  expect(parameters['TaskIdPath']?.['schema']).toEqual({ type: 'string' });
});

it('says what a cancel answers for a processing task as well as for a queued and a finished one', () => {
  const cancel = ((doc['paths'] as Record<string, Record<string, Schema>>)['/v1/tasks/{id}/cancel']?.['post'] ?? {}) as Schema;
  expect(String(cancel['description'])).toMatch(/queued[\s\S]*processing[\s\S]*409 `task_not_cancelable`[\s\S]*terminal/);
});
