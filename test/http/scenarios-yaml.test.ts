import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { parseYaml } from '../../src/contract/index.ts';
import { ADMIN_TOKEN, startEmulator } from '../support/harness.ts';
import type { TestEmulator } from '../support/harness.ts';

// POST /_emulator/scenarios with a scenario file's YAML text as its body (the dashboard's pasted scenarios): parsed
// as the files are, checked as a JSON body is, and refused as malformed JSON is when it is not a document JSON
// could write.

let t: TestEmulator;
beforeEach(async () => {
  t = await startEmulator();
});
afterEach(() => t.close());

const postText = (text: string, type: string) =>
  t.admin.send((r) => r.post('/_emulator/scenarios').set({ Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': type }).send(text));

const names = async (): Promise<string[]> => ((await t.admin.get('/_emulator/scenarios')).body.data as { name: string }[]).map((s) => s.name);

const YAML = `# a comment, as files have them
scenarios:
  - name: pasted
    description: Loaded from YAML.
    queue_seconds: 3
    outcome: failed
    failure: { code: generation_failed }
`;

it.each(['application/yaml', 'text/yaml', 'application/yaml; charset=utf-8'])('loads a scenario sent as %s, as the same document in JSON would', async (type) => {
  const res = await postText(YAML, type);
  expect(res.status).toBe(201);
  const other = await startEmulator();
  try {
    const json = await other.admin.post('/_emulator/scenarios', parseYaml(YAML));
    expect(res.body).toEqual(json.body);
  } finally {
    await other.close();
  }
  expect(res.body.data).toEqual([
    { name: 'pasted', description: 'Loaded from YAML.', queue_seconds: 3, processing_seconds: 10, outcome: 'failed', failure: { code: 'generation_failed', during: 'processing' }, cancelable_while_processing: false },
  ]);
  expect(await names()).toContain('pasted');
});

it('loads a shipped scenario file as it is', async () => {
  const text = readFileSync(new URL('../../scenarios/lifecycle.yaml', import.meta.url), 'utf8');
  const res = await postText(text, 'application/yaml');
  expect(res.status).toBe(201);
  const shipped = (parseYaml(text) as { scenarios: { name: string }[] }).scenarios.map((s) => s.name);
  expect(res.body.data.map((s: { name: string }) => s.name)).toEqual(shipped);
});

it('refuses a YAML scenario as it refuses the same one in JSON: 422 invalid_params naming the field', async () => {
  const bad = 'scenarios:\n  - name: broken\n    outcome: maybe\n';
  const before = await names();
  const res = await postText(bad, 'application/yaml');
  expect(res.status).toBe(422);
  expect(res.body.error.code).toBe('invalid_params');
  const json = await t.admin.post('/_emulator/scenarios', parseYaml(bad));
  expect({ ...res.body.error, request_id: null }).toEqual({ ...json.body.error, request_id: null });
  expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain('scenarios[0].outcome');
  expect(await names()).toEqual(before);
});

it.each([
  ['text that is not YAML', 'scenarios: [\n  - name: x', /^The request body is not valid YAML: .*line \d+, column \d+/],
  ['two documents', 'scenarios: []\n---\nscenarios: []\n', /^The request body is not valid YAML: Source contains multiple documents/],
  ['a list, not a mapping', '- name: x\n  outcome: succeeded\n', /^The request body must be a YAML mapping\.$/],
  ['a document that contains itself', 'scenarios: &loop [*loop]\n', /^The request body nests deeper than 64 levels \(at scenarios(\[0\]){63}\)\.$/],
  ['binary data', 'scenarios:\n  - name: x\n    outcome: succeeded\n    description: !!binary aGk=\n', /^The request body holds a value JSON has no form for at scenarios\[0\]\.description/],
  ['an infinite number', 'scenarios:\n  - name: x\n    outcome: succeeded\n    queue_seconds: .inf\n', /^The request body holds Infinity at scenarios\[0\]\.queue_seconds/],
])('answers %s with 400 bad_request and loads nothing', async (_name, text, message) => {
  const before = await names();
  const res = await postText(text, 'application/yaml');
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe('bad_request');
  expect(res.body.error.message).toMatch(message);
  expect(await names()).toEqual(before);
});

it('refuses YAML that is not UTF-8: 400 bad_request', async () => {
  const res = await t.admin.send((r) =>
    r.post('/_emulator/scenarios').set({ Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/yaml' }).send(Buffer.from([0x73, 0x3a, 0x20, 0xff, 0x0a])),
  );
  expect(res.status).toBe(400);
  expect(res.body.error.message).toBe('The request body is not valid UTF-8.');
});

it('takes YAML on that route only: another control route answers a YAML body 415 unsupported_media_type', async () => {
  const res = await t.admin.send((r) =>
    r.post('/_emulator/faults').set({ Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/yaml' }).send('rules:\n  - fault: { kind: reset }\n'),
  );
  expect(res.status).toBe(415);
  expect(res.body.error.code).toBe('unsupported_media_type');
  expect((await t.admin.get('/_emulator/faults')).body.data).toEqual([]);
});

it('still refuses a plain-text body on the scenarios route: 415 unsupported_media_type', async () => {
  const res = await postText(YAML, 'text/plain');
  expect(res.status).toBe(415);
  expect(await names()).not.toContain('pasted');
});
