import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterEach, expect, it, vi } from 'vitest';
import { importRecording, parseImportRecordingOptions } from '../../src/cli/import-recording.ts';
import { UsageError } from '../../src/cli/args.ts';
import type { HarEntry } from '../../src/recording/index.ts';
import type { Scenario } from '../../src/scenarios/index.ts';
import { chatFormat, messagesFormat, textFingerprint } from '../../src/text-formats/index.ts';
import type { TextFormat } from '../../src/text-formats/index.ts';
import { startEmulator } from '../support/harness.ts';
import type { TestEmulator } from '../support/harness.ts';

// `import-recording --match last-user`: recorded text answers become rules on the format, the model and the last
// user message, so the same conversation sent with another temperature, another system text or a field more is
// still answered with the recorded text; by default (`--match request`) only the same request is.

const dirs: string[] = [];
let t: TestEmulator | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await t?.close();
  t = undefined;
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

/** One recorded text exchange, as the proxy writes it (the fingerprint taken before any redaction). */
function textEntry(format: TextFormat, path: string, atSeconds: number, request: Record<string, unknown>, response: unknown, redacted = false): HarEntry {
  const stream = typeof response === 'string';
  const text = stream ? response : JSON.stringify(response);
  const mimeType = stream ? 'text/event-stream; charset=utf-8' : 'application/json';
  const requestText = JSON.stringify(request);
  return {
    startedDateTime: new Date(Date.UTC(2026, 10, 23, 1, 0, atSeconds)).toISOString(),
    time: 40,
    request: {
      method: 'POST',
      url: `https://api.example.com${path}`,
      httpVersion: 'HTTP/1.1',
      cookies: [],
      headers: [{ name: 'Authorization', value: 'Bearer [redacted]' }],
      queryString: [],
      postData: { mimeType: 'application/json', text: requestText },
      headersSize: -1,
      bodySize: requestText.length,
    },
    response: {
      status: 200,
      statusText: 'OK',
      httpVersion: 'HTTP/1.1',
      cookies: [],
      headers: [{ name: 'Content-Type', value: mimeType }],
      content: { size: text.length, mimeType, text },
      redirectURL: '',
      headersSize: -1,
      bodySize: text.length,
    },
    cache: {},
    timings: { send: 1, wait: 20, receive: 4 },
    _svcEmulator: { textFormat: format.name, textFingerprint: textFingerprint(format, request) ?? '', redacted: redacted ? ['header:authorization', 'content'] : ['header:authorization'] },
  };
}

const RIVER = [
  { role: 'system', content: 'Answer briefly.' },
  { role: 'user', content: 'Which river is the longest?' },
];
const CHAT_REQUEST = { model: 'svc-text-pro', messages: RIVER, temperature: 0.2, max_tokens: 100, stream: true };
const CHUNKS = ['The', ' Nile', ' is usually', ' named', ' the longest', '.'];
const chatStream = (chunks: string[]): string =>
  [
    ...[{ role: 'assistant', content: '' }, ...chunks.map((content) => ({ content }))].map(
      (delta) => `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'svc-text-pro-20261101', choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`,
    ),
    `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'svc-text-pro-20261101', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`,
    'data: [DONE]\n\n',
  ].join('');
const MESSAGES_REQUEST = { model: 'svc-text-lite', max_tokens: 200, messages: [{ role: 'user', content: 'Say hello to the river.' }] };
const MESSAGES_TEXT = 'Hello, river!';
const messagesAnswer = { id: 'msg_1', type: 'message', role: 'assistant', model: 'svc-text-lite-20261101', content: [{ type: 'text', text: MESSAGES_TEXT }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 9, output_tokens: 5 } };

/** Writes the recording, imports it with `args`, and gives what it printed and the text scenarios it wrote. */
async function imported(entries: HarEntry[], args: string[]): Promise<{ out: string; printed: string[]; texts: Scenario[] }> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-import-content-'));
  dirs.push(dir);
  await writeFile(join(dir, 'recording.har'), JSON.stringify({ log: { version: '1.2', creator: { name: 'svc-emulator proxy', version: '0.1.0' }, pages: [], entries } }));
  const printed: string[] = [];
  vi.spyOn(console, 'log').mockImplementation((line: unknown) => void printed.push(String(line)));
  await importRecording(parseImportRecordingOptions([dir, ...args]));
  vi.restoreAllMocks();
  const out = join(dir, 'scenarios');
  const file = await readFile(join(out, 'recorded-text.yaml'), 'utf8').catch(() => null);
  return { out, printed, texts: file === null ? [] : (parse(file) as { scenarios: Scenario[] }).scenarios };
}

const recording = (redacted = false): HarEntry[] => [
  textEntry(chatFormat, '/v1/chat/completions', 0, CHAT_REQUEST, chatStream(CHUNKS), redacted),
  textEntry(messagesFormat, '/v1/messages', 1, MESSAGES_REQUEST, messagesAnswer, redacted),
];

/** The same conversations, changed elsewhere: another temperature and system text, a field more, not streamed. */
const CHANGED_CHAT = { model: 'svc-text-pro', messages: [{ role: 'system', content: 'Answer in one line.' }, RIVER[1]], temperature: 0.9, user: 'someone-else', max_tokens: 120 };
const CHANGED_MESSAGES = { ...MESSAGES_REQUEST, max_tokens: 300, temperature: 0.5, metadata: { user_id: 'u-2' } };

it('imports text answers as rules on the last user message with --match last-user, answering the conversation changed elsewhere', async () => {
  const { out, printed, texts } = await imported(recording(), ['--match', 'last-user']);
  expect(printed).toContain('imported 2 text calls');
  expect(texts.map((s) => s.match)).toEqual([
    { formats: ['chat'], models: ['svc-text-pro'], last_user: { equals: 'Which river is the longest?' } },
    { formats: ['messages'], models: ['svc-text-lite'], last_user: { equals: 'Say hello to the river.' } },
  ]);
  expect(texts[0]?.text).toMatchObject({ chunks: CHUNKS });
  t = await startEmulator({ scenariosDir: out });
  const chat = await t.api.post('/v1/chat/completions', CHANGED_CHAT);
  expect(chat.status).toBe(200);
  expect(chat.body.choices[0].message.content).toBe(CHUNKS.join(''));
  const messages = await t.api.send((r) => r.post('/v1/messages').set({ 'x-api-key': 'sk-emulator-demo', 'anthropic-version': '2023-06-01' }).send(CHANGED_MESSAGES));
  expect(messages.status).toBe(200);
  expect(messages.body.content).toEqual([{ type: 'text', text: MESSAGES_TEXT }]);
  // Another last user message is not the recorded conversation: generated text.
  const other = await t.api.post('/v1/chat/completions', { ...CHANGED_CHAT, messages: [{ role: 'user', content: 'Which river is the shortest?' }] });
  expect(other.body.choices[0].message.content).not.toBe(CHUNKS.join(''));
});

it('keeps whole-request fingerprints by default, which the changed conversation misses', async () => {
  const { out, texts } = await imported(recording(), []);
  expect(texts.map((s) => Object.keys(s.match ?? {}))).toEqual([['text_request'], ['text_request']]);
  expect((await imported(recording(), ['--match', 'request'])).texts.map((s) => s.match)).toEqual(texts.map((s) => s.match));
  t = await startEmulator({ scenariosDir: out });
  const same = await t.api.post('/v1/chat/completions', { ...CHAT_REQUEST, stream: false });
  expect(same.body.choices[0].message.content).toBe(CHUNKS.join(''));
  const changed = await t.api.post('/v1/chat/completions', CHANGED_CHAT);
  expect(changed.body.choices[0].message.content).not.toBe(CHUNKS.join(''));
});

it('skips, saying why, a call recorded without --keep-content and a repeat of one last user message, and refuses an unknown --match', async () => {
  const repeat = textEntry(chatFormat, '/v1/chat/completions', 2, { ...CHAT_REQUEST, messages: [{ role: 'user', content: 'Which river is the longest?' }] }, chatStream(['Nile.']));
  const { printed, texts } = await imported([...recording(), repeat], ['--match', 'last-user']);
  expect(texts).toHaveLength(2);
  expect(printed).toContain('skipped 1 text call: the same last user message as an earlier one (1)');
  const redacted = await imported(recording(true), ['--match', 'last-user']);
  expect(redacted.texts).toEqual([]);
  expect(redacted.printed).toContain('skipped 2 text calls: last user message not in the recording (recorded without --keep-content) (2)');
  expect(() => parseImportRecordingOptions(['rec', '--match', 'prompt'])).toThrow(UsageError);
  expect(() => parseImportRecordingOptions(['rec', '--match', 'prompt'])).toThrow('svc-emulator import-recording: --match must be request or last-user (got prompt)');
});
