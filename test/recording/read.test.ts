import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { createContract, parseYaml } from '../../src/contract/index.ts';
import { importTasks, importTextCalls, scenarioFileText } from '../../src/recording/import.ts';
import { readRecording, RecordingError } from '../../src/recording/index.ts';
import { checkScenarios } from '../../src/scenarios/index.ts';

// HAR files the recorder did not write, or wrote and someone edited: a field missing or of another type is a
// one-line RecordingError naming the entry, or a default; never a TypeError. And whatever a recording holds, the
// scenario files made of it are ones a start accepts.

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function harFile(log: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-read-recording-'));
  dirs.push(dir);
  const file = join(dir, 'recording.har');
  writeFileSync(file, typeof log === 'string' ? log : JSON.stringify(log));
  return file;
}

const har = (entries: unknown[], pages: unknown[] = []): unknown => ({ log: { version: '1.2', creator: { name: 't', version: '1' }, pages, entries } });

/** An entry as browser devtools write one: no `_svcEmulator`, -1 for timings that do not apply, no content text. */
const devtoolsEntry = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
  startedDateTime: '2026-11-23T01:30:00.000Z',
  time: 12,
  request: { method: 'GET', url: 'https://api.example.com/v1/models', httpVersion: 'HTTP/2', headers: [{ name: 'accept', value: '*/*' }], queryString: [], cookies: [], headersSize: -1, bodySize: 0 },
  response: { status: 200, statusText: '', httpVersion: 'HTTP/2', headers: [], cookies: [], content: { size: 10, mimeType: 'application/json' }, redirectURL: '', headersSize: -1, bodySize: -1 },
  cache: {},
  timings: { blocked: -1, dns: -1, send: -1, wait: 10.5, receive: 1.5 },
  ...over,
});

it('reads a devtools entry, giving what it leaves out the value that means not known', () => {
  const { entries } = readRecording(harFile(har([devtoolsEntry({ timings: undefined, request: { method: 'GET', url: 'https://api.example.com/v1/models' } })])));
  expect(entries[0]?.timings).toEqual({ send: 0, wait: 0, receive: 0 });
  expect(entries[0]?.request.headers).toEqual([]);
  expect(entries[0]?.response.content.text).toBeUndefined();
  expect(readRecording(harFile(har([devtoolsEntry()]))).entries[0]?.timings).toEqual({ send: 0, wait: 10.5, receive: 1.5 });
});

it.each([
  ['an entry that is not an object', [null], 'log.entries[0]: not an object'],
  ['no startedDateTime', [devtoolsEntry({ startedDateTime: undefined })], 'log.entries[0]: startedDateTime is not an ISO 8601 time'],
  ['a time that is no time', [devtoolsEntry(), devtoolsEntry({ startedDateTime: 'yesterday' })], 'log.entries[1]: startedDateTime is not an ISO 8601 time'],
  ['no request', [devtoolsEntry({ request: undefined })], 'log.entries[0]: request.method and request.url are not strings'],
  ['no response status', [devtoolsEntry({ response: { content: {} } })], 'log.entries[0]: response.status is not a number'],
])('refuses a file with %s, naming the entry', (_name, entries, message) => {
  const file = harFile(har(entries));
  expect(() => readRecording(file)).toThrow(RecordingError);
  expect(() => readRecording(file)).toThrow(`${file}: ${message}`);
});

it.each([
  ['not JSON', '{"log":', 'not JSON'],
  ['JSON but no log', '[1, 2]', 'not a HAR 1.2 log'],
  ['a log of another version', JSON.stringify({ log: { version: '1.1', entries: [] } }), 'not a HAR 1.2 log'],
])('refuses a file that is %s', (_name, text, message) => {
  expect(() => readRecording(harFile(text))).toThrow(message);
});

it('keeps only the emulator facts of their documented type', () => {
  const extra = { task: 7, textFormat: 'chat', textFingerprint: 'sha256:abc', redacted: ['content', 3], truncated: 'yes' };
  const { entries, pages } = readRecording(harFile(har([devtoolsEntry({ pageref: 5, _svcEmulator: extra })], [{ id: 'T1', _svcEmulator: { model: 42 } }, { title: 'no id' }])));
  expect(entries[0]?._svcEmulator).toEqual({ textFormat: 'chat', redacted: ['content'] });
  expect(entries[0]?.pageref).toBeUndefined();
  expect(pages).toEqual([{ startedDateTime: '', id: 'T1', title: 'T1', pageTimings: {} }]);
});

/** A finished task as an answer shows it. */
const taskAnswer = (id: string, model: unknown): Record<string, unknown> => ({
  id,
  object: 'task',
  model,
  status: 'succeeded',
  created_at: '2026-11-23T09:30:00+08:00',
  started_at: '2026-11-23T09:30:02+08:00',
  finished_at: '2026-11-23T09:30:12+08:00',
  input: { mode: 'note', agree: true },
  output: { text: 'done', files: [] },
});

const entryAnswering = (path: string, body: unknown, extra: Record<string, unknown> = {}, mimeType = 'application/json'): Record<string, unknown> =>
  devtoolsEntry({
    request: { method: 'POST', url: `https://api.example.com${path}`, headers: [], postData: { mimeType: 'application/json', text: JSON.stringify({ model: 'm'.repeat(2000), messages: [] }) } },
    response: { status: 200, headers: [], content: { size: 1, mimeType, text: typeof body === 'string' ? body : JSON.stringify(body) } },
    _svcEmulator: extra,
  });

/** The scenario files import-recording writes of a recording, checked as a start checks them. */
function importedAndChecked(file: string): { tasks: ReturnType<typeof importTasks>; texts: ReturnType<typeof importTextCalls> } {
  const recording = readRecording(file);
  const tasks = importTasks(recording);
  const texts = importTextCalls(recording);
  const contract = createContract();
  // As the command: a file only for what has scenarios.
  for (const imported of [tasks, texts]) if (imported.scenarios.length > 0) checkScenarios(contract, parseYaml(scenarioFileText('checked', imported.scenarios)));
  return { tasks, texts };
}

it('makes scenarios a start accepts of odd recordings: long model names, ids one name apart, negative token counts', () => {
  const fingerprint = `sha256:${'ab'.repeat(32)}`;
  const stream = [
    `data: ${JSON.stringify({ choices: [{ delta: { role: 'assistant', content: 'Hi' }, finish_reason: null }] })}`,
    `data: ${JSON.stringify({ choices: [{ delta: {}, finish_reason: 'stop' }], usage: { prompt_tokens: -3, completion_tokens: 1 } })}`,
    'data: [DONE]',
    '',
  ].join('\n\n');
  const file = harFile(
    har([
      entryAnswering('/v1/tasks', taskAnswer('T261123093000ABCDEF', 'x'.repeat(2000)), { task: 'T261123093000ABCDEF' }),
      entryAnswering('/v1/tasks', taskAnswer('t261123093000abcdef', 'social-notes-data'), { task: 't261123093000abcdef' }),
      entryAnswering('/v1/tasks', taskAnswer('T261123093001ABCDEF', 17), { task: 'T261123093001ABCDEF' }),
      entryAnswering('/v1/chat/completions', stream, { textFormat: 'chat', textFingerprint: fingerprint }, 'text/event-stream'),
    ]),
  );
  const { tasks, texts } = importedAndChecked(file);
  expect(tasks.scenarios.map((s) => s.name)).toEqual(['recorded-t261123093000abcdef', 'recorded-t261123093001abcdef']);
  expect(tasks.skipped).toEqual([{ what: 'task', id: 't261123093000abcdef', reason: 'the same scenario name as task T261123093000ABCDEF' }]);
  expect(tasks.scenarios[0]?.description?.length).toBe(1000);
  expect(tasks.scenarios[1]?.match).toBeUndefined();
  expect(texts.scenarios).toHaveLength(1);
  expect(texts.scenarios[0]?.text?.input_tokens).toBeUndefined();
  expect(texts.scenarios[0]?.text?.chunks).toEqual(['Hi']);
  expect(texts.scenarios[0]?.description?.length).toBe(1000);
});

it('skips a text answer too long for a scenario, and one whose fingerprint is not one', () => {
  const word = 'w'.repeat(100_001);
  const answer = { choices: [{ message: { role: 'assistant', content: `short ${word}` }, finish_reason: 'stop' }] };
  const file = harFile(
    har([
      entryAnswering('/v1/chat/completions', answer, { textFormat: 'chat', textFingerprint: `sha256:${'cd'.repeat(32)}` }),
      entryAnswering('/v1/chat/completions', answer, { textFormat: 'chat', textFingerprint: 'md5:1234' }),
    ]),
  );
  const { texts } = importedAndChecked(file);
  expect(texts.scenarios).toEqual([]);
  expect(texts.skipped.map((s) => s.reason)).toEqual([
    'answer too long for a scenario (over 100000 chunks, or a chunk over 100000 characters)',
    'no fingerprint (a request the format could not read)',
  ]);
});
