import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, expect, it } from 'vitest';

/**
 * Types generated from the documents by openapi-typescript, as an integrator would generate them, must accept the
 * requests real clients send: a chat call with a tool and a JSON-schema response format and an image part, a
 * Messages call with an image block, a task per model. Free-form objects (a tool's parameters, a JSON schema, an
 * image source, usage) need `additionalProperties: true`, or the generated types reject every key in them.
 */
const dir = mkdtempSync(join(tmpdir(), 'svc-openapi-ts-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * `defaultNonNullable: false` (CLI `--default-non-nullable false`), as the README says: openapi-typescript 7 makes
 * every field with a `default` required by default, which suits answers but not requests, where a default is what
 * the server fills in for a field left out.
 */
async function generate(name: 'service' | 'admin'): Promise<void> {
  const ast = await openapiTS(new URL(`../../openapi/${name}.yaml`, import.meta.url), { defaultNonNullable: false });
  writeFileSync(join(dir, `${name}.ts`), astToString(ast));
}

const USAGE = `
import type { components as service } from './service.ts';
import type { components as admin } from './admin.ts';
type S = service['schemas'];

export const chat: S['ChatCompletionRequest'] = {
  model: 'svc-text-pro',
  messages: [
    { role: 'system', content: 'Answer in JSON.' },
    { role: 'user', content: [
      { type: 'text', text: 'What is in this picture?' },
      { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' } },
    ] },
  ],
  tools: [{ type: 'function', function: { name: 'get_weather', description: 'Weather for a city', strict: true,
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false } } }],
  tool_choice: { type: 'function', function: { name: 'get_weather' } },
  response_format: { type: 'json_schema', json_schema: { name: 'answer', strict: true,
    schema: { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] } } },
  max_completion_tokens: 256,
  temperature: 0.2,
};

export const message: S['MessageRequest'] = {
  model: 'svc-text-lite',
  max_tokens: 128,
  system: [{ type: 'text', text: 'Be brief.' }],
  messages: [{ role: 'user', content: [
    { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
    { type: 'text', text: 'Describe it.' },
  ] }],
};

export const video: S['SubmitTaskRequest'] = {
  model: 'video-gen-2.0-fast',
  input: { prompt: 'A cat on a skateboard', ratio: '9:16', resolution: '1080p', duration: 8 },
  metadata: { order: '42' },
};
export const notes: S['SubmitTaskRequest'] = { model: 'social-notes-data', params: { mode: 'search', keyword: 'coffee', agree: true } };
export const usage: NonNullable<S['TaskOutput']['usage']> = { output_tokens: 1200, reference_seconds: 3 };

export const scenario: admin['schemas']['Scenario'] = {
  name: 'slow-video',
  queue_seconds: 5,
  outcome: 'succeeded',
  output: { usage: { output_tokens: 10 } },
};

// The types still refuse what the document refuses.
// @ts-expect-error an unknown text model
export const badModel: S['ChatCompletionRequest'] = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] };
// @ts-expect-error a ratio the video model does not offer
export const badRatio: S['SubmitTaskRequest'] = { model: 'video-gen-2.0-fast', input: { prompt: 'x', ratio: '2:1' } };
`;

it('generates types from both documents that accept the requests real clients send', async () => {
  await Promise.all([generate('service'), generate('admin')]);
  const file = join(dir, 'usage.ts');
  writeFileSync(file, USAGE);
  const program = ts.createProgram([file], {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    allowImportingTsExtensions: true,
    exactOptionalPropertyTypes: true,
    skipLibCheck: true,
    types: [],
  });
  const problems = ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start) : undefined;
    return `${d.file?.fileName.split('/').pop() ?? ''}:${where ? where.line + 1 : '?'} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
  });
  expect(problems).toEqual([]);
});
