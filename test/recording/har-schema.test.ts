import Anthropic from '@anthropic-ai/sdk';
import type { Ajv as AjvClass, ErrorObject } from 'ajv';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, expect, it } from 'vitest';
import { createEmulator } from '../../src/index.ts';
import { createProxy } from '../../src/proxy/index.ts';
import { createRecorder } from '../../src/recording/index.ts';

// The recordings against the HAR 1.2 JSON Schema of the har-schema package (the one HAR tools validate with),
// not against our own reading of the format: the committed sample, and a fresh recording of text streams of all
// three formats and a task, content kept and redacted.

// Draft-06 schemas (har-schema's) need draft-06's meta-schema; their `optional` and `min` are not JSON Schema
// keywords, hence strict: false.
const require = createRequire(import.meta.url);
const { Ajv } = require('ajv') as { Ajv: typeof AjvClass };
const addFormats = (require('ajv-formats') as { default: (ajv: AjvClass) => unknown }).default;
const ajv = new Ajv({ strict: false, allErrors: true });
ajv.addMetaSchema(require('ajv/dist/refs/json-schema-draft-06.json') as object);
addFormats(ajv);
for (const schema of Object.values(require('har-schema') as Record<string, object>)) ajv.addSchema(schema);
const validateHar = ajv.getSchema('har.json#');
if (!validateHar) throw new Error('har-schema has no har.json');

const problems = (har: unknown): string[] => (validateHar(har) ? [] : (validateHar.errors ?? []).map((e: ErrorObject) => `${e.instancePath} ${e.message ?? ''}`));
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

it('the committed sample recording is HAR 1.2 by the har-schema package', () => {
  const file = new URL('../../examples/recording/sample/recording-261125071922.har', import.meta.url);
  const har = JSON.parse(readFileSync(file, 'utf8')) as { log: { entries: { response: Record<string, unknown> }[] } };
  expect(problems(har)).toEqual([]);
  // And the schema does catch a file that is not: an answer without its content.
  delete har.log.entries[0]?.response['content'];
  expect(problems(har)).toEqual(["/log/entries/0/response must have required property 'content'"]);
});

it.each([false, true])('a fresh recording (keepContent %s) of streams in three formats and a task is HAR 1.2 by the har-schema package', async (keepContent) => {
  const emulator = await createEmulator({ clock: 'manual', log: () => undefined });
  const direct = await emulator.listen(0);
  const dir = mkdtempSync(join(tmpdir(), 'svc-har-schema-'));
  dirs.push(dir);
  const recorder = createRecorder({ dir, upstream: direct, keepContent });
  const proxy = createProxy({ upstream: direct, log: () => undefined, onExchange: recorder.onExchange });
  const url = await proxy.listen(0);
  try {
    const openai = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'sk-emulator-demo', maxRetries: 0 });
    for await (const chunk of await openai.chat.completions.create({ model: 'svc-text-lite', max_tokens: 12, stream: true, messages: [{ role: 'user', content: 'Hi' }] })) void chunk;
    for await (const event of await openai.responses.create({ model: 'svc-text-lite', input: 'Hi', max_output_tokens: 12, stream: true })) void event;
    const anthropic = new Anthropic({ baseURL: url, apiKey: 'sk-emulator-demo', maxRetries: 0 });
    await anthropic.messages.stream({ model: 'svc-text-lite', max_tokens: 12, messages: [{ role: 'user', content: 'Hi' }] }).finalMessage();
    const headers = { Authorization: 'Bearer sk-emulator-demo', 'Content-Type': 'application/json' };
    const task = (await (await fetch(`${url}/v1/tasks`, { method: 'POST', headers, body: JSON.stringify({ model: 'social-notes-data', input: { mode: 'note', note: 'https://notes.example.com/n/har', agree: true } }) })).json()) as { id: string };
    expect((await fetch(`${url}/v1/tasks/${task.id}`, { headers })).status).toBe(200);
    expect((await fetch(`${url}/v1/tasks/T000000000000NOSUCH`, { headers })).status).toBe(404);
  } finally {
    await proxy.close();
    await emulator.close();
  }
  const [file] = await recorder.close();
  const har = JSON.parse(readFileSync(file ?? '', 'utf8')) as { log: { entries: unknown[]; pages: unknown[] } };
  expect(har.log.entries).toHaveLength(6);
  expect(har.log.pages).toHaveLength(1);
  expect(problems(har)).toEqual([]);
}, 30_000);
