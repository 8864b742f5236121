import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { startEmulator } from '../support/harness.ts';
import type { TestEmulator } from '../support/harness.ts';

let t: TestEmulator;
beforeEach(async () => {
  t = await startEmulator();
});
afterEach(() => t.close());

interface TextModelFixture {
  id: string;
  capability: string;
  input_per_million: string;
  output_per_million: string;
  context_tokens: number;
  max_output_tokens: number;
}

/** The text models as the fixture file states them, read here so the test follows the file. */
const TEXT_MODELS_FILE = new URL('../../fixtures/text-models.json', import.meta.url);
const TEXT_MODELS = (JSON.parse(readFileSync(TEXT_MODELS_FILE, 'utf8')) as { models: TextModelFixture[] }).models;
const TASK_MODELS = ['social-notes-data', 'video-gen-2.0-fast', 'avatar-photo'];
const POINTS = /^[0-9]+\.[0-9]{3}$/;

/** A task model's params_schema compiled on its own, as a client would. */
async function compiledParamsSchema(model: string): Promise<ReturnType<Ajv2020['compile']>> {
  const res = await t.api.get(`/v1/models/${model}`);
  expect(res.status).toBe(200);
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  return ajv.compile(res.body.params_schema as object);
}

it('lists the three task models and every text model of the fixture file', async () => {
  const res = await t.api.get('/v1/models');
  expect(res.status).toBe(200);
  expect(res.body.object).toBe('list');
  const ids = (res.body.data as { id: string }[]).map((m) => m.id);
  expect(TEXT_MODELS.length).toBeGreaterThan(0);
  expect(ids.sort()).toEqual([...TASK_MODELS, ...TEXT_MODELS.map((m) => m.id)].sort());
});

it('describes task models in the list with their kind, limit and price rule, without params_schema', async () => {
  const data = (await t.api.get('/v1/models')).body.data as Record<string, unknown>[];
  const video = data.find((m) => m['id'] === 'video-gen-2.0-fast');
  expect(video).toMatchObject({
    object: 'model',
    kind: 'task',
    capability: 'video generation, produces video',
    max_processing_seconds: 3600,
    pricing: { rule: 'per_second', per_second: { '480p': '97.2', '720p': '237.6', '1080p': '587.5' } },
  });
  for (const model of data.filter((m) => m['kind'] === 'task')) expect(model).not.toHaveProperty('params_schema');
  expect(data.filter((m) => m['kind'] === 'task').map((m) => m['id']).sort()).toEqual([...TASK_MODELS].sort());
});

it('describes text models with the fixture file values', async () => {
  const data = (await t.api.get('/v1/models')).body.data as Record<string, unknown>[];
  for (const fixture of TEXT_MODELS) {
    expect(data.find((m) => m['id'] === fixture.id)).toEqual({
      id: fixture.id,
      object: 'model',
      kind: 'text',
      capability: fixture.capability,
      max_processing_seconds: null,
      context_tokens: fixture.context_tokens,
      max_output_tokens: fixture.max_output_tokens,
      pricing: {
        unit: 'points per million tokens',
        input: fixture.input_per_million,
        output: fixture.output_per_million,
      },
    });
  }
});

it.each(TASK_MODELS)('answers GET /v1/models/%s with a standalone draft 2020-12 params_schema', async (model) => {
  const res = await t.api.get(`/v1/models/${model}`);
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ id: model, object: 'model', kind: 'task' });
  const schema = res.body.params_schema as Record<string, unknown>;
  expect(schema['$schema']).toBe('https://json-schema.org/draft/2020-12/schema');
  expect(schema['type']).toBe('object');
  expect(schema).toHaveProperty('properties');
  // Standing alone: no reference into the OpenAPI document is left.
  expect(JSON.stringify(schema)).not.toContain('$ref');
  expect(JSON.stringify(schema)).not.toContain('#/components');
});

it('keeps the file rules of file parameters in params_schema', async () => {
  const schema = (await t.api.get('/v1/models/video-gen-2.0-fast')).body.params_schema;
  expect(schema.properties.videos['x-file']).toEqual({
    kind: 'video',
    max_bytes: 52428800,
    mime_types: ['video/mp4', 'video/quicktime'],
    min_seconds: 2,
    max_seconds: 15,
    max_total_seconds: 15,
  });
  expect(schema.properties.videos.items).toMatchObject({ type: 'string', pattern: expect.any(String) });
});

// Each case is checked by the schema compiled from GET /v1/models/{id} and by POST /v1/tasks: the two must agree.
const photo = 'https://cdn.example.com/p.jpg';
const speech = 'https://cdn.example.com/a.mp3';
it.each([
  ['video-gen-2.0-fast', 'a plain prompt', { prompt: 'a cat surfing', duration: 5 }, true],
  [
    'video-gen-2.0-fast',
    'every option',
    { mode: 'text', prompt: 'p', ratio: '9:16', resolution: '1080p', duration: 15, sound: false, seed: 7 },
    true,
  ],
  ['video-gen-2.0-fast', 'duration 16', { prompt: 'a cat surfing', duration: 16 }, false],
  ['video-gen-2.0-fast', 'duration 3', { prompt: 'a cat surfing', duration: 3 }, false],
  ['video-gen-2.0-fast', 'no prompt', { duration: 5 }, false],
  ['video-gen-2.0-fast', 'an unknown ratio', { prompt: 'p', ratio: '2:1' }, false],
  ['video-gen-2.0-fast', 'frames mode without an image', { mode: 'frames', prompt: 'p' }, false],
  ['video-gen-2.0-fast', 'frames mode with an image', { mode: 'frames', prompt: 'p', image: photo }, true],
  ['video-gen-2.0-fast', 'an ftp file address', { mode: 'frames', prompt: 'p', image: 'ftp://x/y.png' }, false],
  ['avatar-photo', 'an image and an audio', { image: photo, audio: speech }, true],
  ['avatar-photo', 'an unknown quality', { image: photo, audio: speech, quality: 'ultra' }, false],
  ['avatar-photo', 'no image', { audio: speech }, false],
  ['social-notes-data', 'a note', { mode: 'note', note: 'https://notes.example.com/n/1', agree: true }, true],
  ['social-notes-data', 'a search', { mode: 'search', keyword: 'coffee', page: 2, agree: true }, true],
  ['social-notes-data', 'agree false', { mode: 'note', note: 'n', agree: false }, false],
  ['social-notes-data', 'search without a keyword', { mode: 'search', agree: true }, false],
])('params_schema of %s and POST /v1/tasks agree on %s (valid: %s)', async (model, _name, input, valid) => {
  const validate = await compiledParamsSchema(model);
  expect(validate(input), JSON.stringify(validate.errors)).toBe(valid);
  const res = await t.api.post('/v1/tasks', { model, input });
  expect(res.status, JSON.stringify(res.body)).toBe(valid ? 200 : 422);
});

it('answers a text model by id without params_schema', async () => {
  const fixture = TEXT_MODELS[0];
  if (!fixture) throw new Error('fixtures/text-models.json has no model');
  const res = await t.api.get(`/v1/models/${fixture.id}`);
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({
    id: fixture.id,
    object: 'model',
    kind: 'text',
    context_tokens: fixture.context_tokens,
    pricing: { input: fixture.input_per_million, output: fixture.output_per_million },
  });
  expect(res.body).not.toHaveProperty('params_schema');
});

it.each(['video-gen-9', 'VIDEO-GEN-2.0-FAST', 'constructor', '__proto__', 'toString'])(
  'answers 404 model_unavailable for the unknown model %s',
  async (id) => {
    const res = await t.api.get(`/v1/models/${encodeURIComponent(id)}`);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({
      error: {
        code: 'model_unavailable',
        message: expect.stringContaining(id),
        request_id: res.headers['x-request-id'],
      },
    });
  },
);

it('prices every text model in points per million tokens, as three-decimal strings from the fixture file', async () => {
  const res = await t.api.get('/v1/pricing');
  expect(res.status).toBe(200);
  expect(res.body.object).toBe('list');
  expect(res.body.data).toHaveLength(TEXT_MODELS.length);
  for (const fixture of TEXT_MODELS) {
    const entry = (res.body.data as Record<string, unknown>[]).find((p) => p['model'] === fixture.id);
    expect(entry).toEqual({
      model: fixture.id,
      unit: 'points per million tokens',
      input: fixture.input_per_million,
      output: fixture.output_per_million,
    });
    expect(entry?.['input']).toMatch(POINTS);
    expect(entry?.['output']).toMatch(POINTS);
  }
});

it.each(['/v1/models', '/v1/models/avatar-photo', '/v1/pricing'])('refuses GET %s without a key with 401', async (p) => {
  const res = await t.api.send((r) => r.get(p));
  expect(res.status).toBe(401);
  expect(res.body.error).toMatchObject({ code: 'invalid_api_key', request_id: res.headers['x-request-id'] });
});
