import Anthropic from '@anthropic-ai/sdk';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runCommand } from '../support/command.ts';
import { sendJson } from '../support/json-client.ts';
import { closedPort } from '../support/ports.ts';
import type { CommandRun } from '../support/command.ts';
import { parityInProcess } from '../support/shared-in-process.ts';
import { createEmulator, signRequest } from '../../src/index.ts';
import type { Emulator } from '../../src/index.ts';
import { UsageError } from '../../src/cli/args.ts';
import { parseParityOptions } from '../../src/cli/parity.ts';
import { runParity } from '../../src/parity/index.ts';
import type { Difference, ParityReport } from '../../src/parity/index.ts';
import { createProxy } from '../../src/proxy/index.ts';
import { importTasks } from '../../src/recording/import.ts';
import { createRecorder, readRecording } from '../../src/recording/index.ts';
import type { Har, HarEntry } from '../../src/recording/index.ts';

// A recording made by the proxy and its recorder in front of one emulator (tasks polled to their end while its
// clock is moved by hand, a failure scenario, a 422, two 401s, a signed call, the three text formats through the
// official SDKs), replayed against a fresh emulator; then the same recording with its answers edited to deviate.

const ADMIN = 'parity-admin';
const DEMO_KEY = 'sk-emulator-demo';
const NOTES = { model: 'social-notes-data', input: { mode: 'note', note: 'https://notes.example.com/n/parity-orchard', agree: true } };
const VIDEO = { model: 'video-gen-2.0-fast', input: { prompt: 'A heron standing in a misty river at dawn', resolution: '480p', duration: 4 } };

let source: Emulator;
/** The recording of the conforming traffic: a directory with one .har file. */
let recorded: string;
const ids = { notes: '', failing: '', video: '' };
const running: Emulator[] = [];

const parityCli = (args: string[]): Promise<CommandRun> => runCommand(['parity', ...args], 150_000);

async function control(base: string, method: string, path: string, body?: object): Promise<Record<string, unknown>> {
  const reply = await sendJson(base, ADMIN, method, path, body);
  expect(reply.status >= 200 && reply.status < 300, `${method} ${path} answered ${reply.status}`).toBe(true);
  return reply.body as Record<string, unknown>;
}

/** The conforming traffic, sent through the proxy at `url`; the clock of the emulator at `direct` moved by hand. */
async function traffic(url: string, direct: string): Promise<void> {
  const account = await control(direct, 'POST', '/_emulator/accounts', { points: '100000.000' });
  const key = String((await control(direct, 'POST', `/_emulator/accounts/${String(account['id'])}/keys`, {}))['key']);
  const withSigning = await control(direct, 'POST', `/_emulator/accounts/${String(account['id'])}/keys`, { signing: true });
  const advance = (seconds: number): Promise<Record<string, unknown>> => control(direct, 'POST', '/_emulator/clock/advance', { seconds });
  const api = async (method: string, path: string, body?: unknown, headers: Record<string, string> = { Authorization: `Bearer ${key}` }): Promise<Record<string, unknown>> => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return (await res.json()) as Record<string, unknown>;
  };

  const chat = JSON.stringify({ model: 'svc-text-pro', max_tokens: 32, messages: [{ role: 'user', content: 'Name a quiet bird' }] });
  const signature = signRequest({ secret: String(withSigning['signing_secret']), method: 'POST', path: '/v1/chat/completions', body: chat });
  const signed = await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { Authorization: `Bearer ${String(withSigning['key'])}`, 'Content-Type': 'application/json', ...signature }, body: chat });
  expect(signed.status).toBe(200);
  await signed.arrayBuffer();

  ids.notes = String((await api('POST', '/v1/tasks', NOTES))['id']);
  expect((await api('GET', `/v1/tasks/${ids.notes}`))['status']).toBe('queued');
  await advance(1);
  expect((await api('GET', `/v1/tasks/${ids.notes}`))['status']).toBe('processing');
  ids.failing = String((await api('POST', '/v1/tasks', NOTES, { Authorization: `Bearer ${key}`, 'X-Emulator-Scenario': 'no_result' }))['id']);
  await advance(8);
  expect((await api('GET', `/v1/tasks/${ids.notes}`))['status']).toBe('succeeded');
  expect((await api('GET', `/v1/tasks/${ids.failing}`))['status']).toBe('failed');
  expect(((await api('POST', `/v1/tasks/${ids.notes}/cancel`))['error'] as { code: string }).code).toBe('task_not_cancelable');
  ids.video = String((await api('POST', '/v1/tasks', VIDEO))['id']);
  await advance(15);
  expect((await api('GET', `/v1/tasks/${ids.video}`))['status']).toBe('processing');
  await advance(150);
  expect((await api('GET', `/v1/tasks/${ids.video}`))['status']).toBe('succeeded');
  expect((await api('GET', '/v1/tasks?limit=2'))['object']).toBe('list');
  expect(((await api('POST', '/v1/tasks', { model: 'social-notes-data', input: {} }))['error'] as { code: string }).code).toBe('invalid_params');
  expect(((await api('GET', '/v1/tasks', undefined, {}))['error'] as { code: string }).code).toBe('invalid_api_key');
  expect(await api('GET', '/v1/tasks', undefined, { Authorization: 'Bearer sk-not-a-key-of-this-account' })).toHaveProperty('error');

  const openai = new OpenAI({ baseURL: `${url}/v1`, apiKey: key, maxRetries: 0 });
  let streamed = '';
  const stream = await openai.chat.completions.create({ model: 'svc-text-pro', messages: [{ role: 'user', content: 'How do herons fish?' }], stream: true, stream_options: { include_usage: true } });
  for await (const chunk of stream) streamed += chunk.choices[0]?.delta.content ?? '';
  expect(streamed).not.toBe('');
  expect((await openai.responses.create({ model: 'svc-text-pro', input: 'Where do herons nest?', max_output_tokens: 16 })).status).toBe('incomplete');
  const anthropic = new Anthropic({ baseURL: url, apiKey: key, maxRetries: 0 });
  expect((await anthropic.messages.stream({ model: 'svc-text-pro', max_tokens: 64, messages: [{ role: 'user', content: 'Why do herons stand still?' }] }).finalMessage()).role).toBe('assistant');
  const message = await api('POST', '/v1/messages', { model: 'svc-text-pro', max_tokens: 64, messages: [{ role: 'user', content: 'Do herons sing?' }] }, { 'x-api-key': key });
  expect(message['type']).toBe('message');
}

beforeAll(async () => {
  source = await createEmulator({ clock: 'manual', adminToken: ADMIN, log: () => undefined });
  const direct = await source.listen(0);
  recorded = mkdtempSync(join(tmpdir(), 'svc-parity-'));
  const recorder = createRecorder({ dir: recorded, upstream: direct, writeDelayMs: 20 });
  const proxy = createProxy({ upstream: direct, log: () => undefined, onExchange: recorder.onExchange });
  const url = await proxy.listen(0);
  try {
    await traffic(url, direct);
  } finally {
    await proxy.close();
  }
  expect(await recorder.close()).toHaveLength(1);
});

afterAll(async () => {
  await source.close();
  for (const emulator of running.splice(0)) await emulator.close();
});

/** A fresh emulator (the demo account and key), its address. */
async function fresh(): Promise<string> {
  const emulator = await createEmulator({ clock: 'manual', adminToken: ADMIN, log: () => undefined });
  running.push(emulator);
  return emulator.listen(0);
}

const harFile = (dir: string): string => join(dir, readdirSync(dir).find((name) => name.endsWith('.har')) ?? '');

/** A copy of the recording with some of its entries edited: what a deviating service would have answered. */
function deviating(edit: (entries: HarEntry[]) => void): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-parity-deviating-'));
  cpSync(recorded, dir, { recursive: true });
  const har = JSON.parse(readFileSync(harFile(dir), 'utf8')) as Har;
  edit(har.log.entries);
  writeFileSync(harFile(dir), JSON.stringify(har, null, 2));
  return dir;
}

/** The recorded entry of a request, and its index among the recording's entries. */
function entryOf(entries: HarEntry[], method: string, path: string, which: (entry: HarEntry) => boolean = () => true): { entry: HarEntry; index: number } {
  const index = entries.findIndex((e) => e.request.method === method && new URL(e.request.url).pathname + new URL(e.request.url).search === path && which(e));
  const entry = entries[index];
  if (!entry) throw new Error(`no recorded ${method} ${path}`);
  return { entry, index };
}

const bodyOf = (entry: HarEntry): Record<string, unknown> => JSON.parse(entry.response.content.text ?? '') as Record<string, unknown>;
const setBody = (entry: HarEntry, body: unknown): void => void (entry.response.content.text = JSON.stringify(body));
const summary = (report: ParityReport): Pick<Difference, 'check' | 'endpoint' | 'path' | 'recorded' | 'replayed' | 'entry'>[] =>
  report.differences.map(({ check, endpoint, path, recorded: was, replayed, entry }) => ({ check, endpoint, path, recorded: was, replayed, entry }));

it('replays a recording made against an emulator on a fresh one with 100 % parity, polling each task at its recorded age', async () => {
  const recording = readRecording(recorded);
  const report = await runParity({ recording, baseUrl: await fresh(), apiKey: DEMO_KEY, adminToken: ADMIN });

  expect(summary(report)).toEqual([]);
  expect(report).toMatchObject({ exchanges: recording.entries.length, differed: 0, parity: 100 });
  expect(report.agreed).toBe(report.checks);
  expect(report.endpoints.map((e) => `${e.endpoint} ${e.exchanges}`)).toEqual([
    'POST /v1/chat/completions 2',
    'POST /v1/tasks 4',
    'GET /v1/tasks/{id} 6',
    'POST /v1/tasks/{id}/cancel 1',
    'GET /v1/tasks 3',
    'POST /v1/responses 1',
    'POST /v1/messages 2',
  ]);
  const tasks = report.endpoints.find((e) => e.endpoint === 'GET /v1/tasks/{id}');
  expect(tasks?.checks).toEqual({
    'parity.status': { agreed: 6, differed: 0 },
    'parity.headers.content-type': { agreed: 6, differed: 0 },
    'parity.headers.request-id': { agreed: 6, differed: 0 },
    'parity.body.shape': { agreed: 6, differed: 0 },
    'parity.body.values': { agreed: 6, differed: 0 },
  });
  expect(report.endpoints.find((e) => e.endpoint === 'POST /v1/messages')?.checks).toMatchObject({
    'parity.body.values': { agreed: 1, differed: 0 },
    'parity.headers.stream': { agreed: 1, differed: 0 },
    'parity.stream.events': { agreed: 1, differed: 0 },
    'parity.stream.values': { agreed: 1, differed: 0 },
  });
  const refused = recording.entries.findIndex((e) => e.response.status === 401 && e.request.headers.some((h) => h.name.toLowerCase() === 'authorization'));
  expect(report.notes).toEqual([
    'entry 0 carried signing headers (X-Svc-Signature): a signature cannot be made again, so they went unsigned with the given key',
    `entry ${refused} had a key the service refused (401): replayed with a key no deployment knows (sk-parity-not-a-key)`,
  ]);
}, 180_000);

it('without the control API the tasks are polled at whatever age they have: their states differ, and a note says why', async () => {
  const report = await runParity({ recording: readRecording(recorded), baseUrl: await fresh(), apiKey: DEMO_KEY });

  const statuses = report.differences.filter((d) => d.endpoint === 'GET /v1/tasks/{id}' && d.path === '$.status');
  expect(statuses.map((d) => `${d.endpoint} ${String(d.recorded)} → ${String(d.replayed)}`)).toEqual([
    'GET /v1/tasks/{id} processing → queued',
    'GET /v1/tasks/{id} succeeded → queued',
    'GET /v1/tasks/{id} failed → queued',
    'GET /v1/tasks/{id} processing → queued',
    'GET /v1/tasks/{id} succeeded → queued',
  ]);
  expect(report.parity).toBeLessThan(100);
  expect(report.notes).toContain('without --admin-token the deployment’s clock was not moved: tasks were polled at whatever age they had, not at their recorded age');
}, 180_000);

it('with --scenarios recorded each task is submitted with the scenario import-recording made of it', async () => {
  const base = await fresh();
  const recording = readRecording(recorded);
  const { scenarios } = importTasks(recording);
  expect(scenarios.map((s) => s.name).sort()).toEqual([ids.notes, ids.failing, ids.video].map((id) => `recorded-${id.toLowerCase()}`).sort());
  await control(base, 'POST', '/_emulator/scenarios', { scenarios });

  const report = await runParity({ recording, baseUrl: base, apiKey: DEMO_KEY, adminToken: ADMIN, scenarios: 'recorded' });

  expect(summary(report)).toEqual([]);
  expect(report.notes).toContain('3 tasks were submitted with X-Emulator-Scenario: recorded-<task id>');
}, 180_000);

it('through the CLI: the report per endpoint and check, JSON and JUnit files, exit 0', async () => {
  const out = mkdtempSync(join(tmpdir(), 'svc-parity-out-'));
  const run = await parityCli([recorded, '--base-url', await fresh(), '--admin-token', ADMIN, '--json', join(out, 'parity.json'), '--junit', join(out, 'parity.xml')]);

  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  expect(run.stdout).toContain(`replayed against http://127.0.0.1:`);
  expect(run.stdout).toMatch(/^GET \/v1\/tasks\/\{id\}: 6 exchanges\n {2}parity\.status +6 agreed$/m);
  expect(run.stdout).toMatch(/\nparity 100 %: (\d+) of \1 checks agreed, 0 differed \(0 differences\)\n$/);
  const json = JSON.parse(readFileSync(join(out, 'parity.json'), 'utf8')) as ParityReport;
  expect(json).toMatchObject({ parity: 100, differed: 0, differences: [] });
  const junit = readFileSync(join(out, 'parity.xml'), 'utf8');
  expect(junit).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?>\n<testsuites name="svc-emulator parity" tests="\d+" failures="0"/);
  expect(junit).toContain('<testsuite name="parity GET /v1/tasks/{id}" tests="5" failures="0" skipped="0">');
}, 180_000);

it('reports each way the recorded answers deviate, with its check id, endpoint, JSON path and a curl line, exit 1', async () => {
  const places: Record<string, number> = {};
  let stopReason: unknown;
  const dir = deviating((entries) => {
    const points = entryOf(entries, 'GET', `/v1/tasks/${ids.notes}`, (e) => bodyOf(e)['status'] === 'succeeded');
    const task = bodyOf(points.entry);
    setBody(points.entry, { ...task, points: { ...(task['points'] as object), frozen: 40 } });
    places['points'] = points.index;

    const failed = entryOf(entries, 'GET', `/v1/tasks/${ids.failing}`);
    const { finished_at: _, ...unfinished } = bodyOf(failed.entry);
    setBody(failed.entry, unfinished);
    places['failed'] = failed.index;

    const invalid = entryOf(entries, 'POST', '/v1/tasks', (e) => e.response.status === 422);
    const error = bodyOf(invalid.entry)['error'] as Record<string, unknown>;
    setBody(invalid.entry, { error: { ...error, code: 'invalid_request' } });
    places['invalid'] = invalid.index;

    const list = entryOf(entries, 'GET', '/v1/tasks?limit=2');
    list.entry.response.headers = list.entry.response.headers.filter((h) => h.name.toLowerCase() !== 'x-request-id');
    places['list'] = list.index;

    // The stream's second and third events change places: ping before content_block_start.
    const message = entryOf(entries, 'POST', '/v1/messages', (e) => e.response.content.mimeType.includes('event-stream'));
    const events = (message.entry.response.content.text ?? '').split('\n\n');
    message.entry.response.content.text = [events[0], events[2], events[1], ...events.slice(3)].join('\n\n');
    places['message'] = message.index;

    const answered = entryOf(entries, 'POST', '/v1/messages', (e) => e.request.headers.some((h) => h.name.toLowerCase() === 'x-api-key'));
    const body = bodyOf(answered.entry);
    stopReason = body['stop_reason'];
    setBody(answered.entry, { ...body, stop_reason: 'stop_sequence' });
    places['answered'] = answered.index;
  });

  const report = await runParity({ recording: readRecording(dir), baseUrl: await fresh(), apiKey: DEMO_KEY, adminToken: ADMIN });

  expect(summary(report)).toEqual([
    { check: 'parity.body.shape', endpoint: 'GET /v1/tasks/{id}', path: '$.points.frozen', recorded: 'number', replayed: 'string', entry: places['points'] },
    { check: 'parity.body.shape', endpoint: 'GET /v1/tasks/{id}', path: '$.finished_at', recorded: 'missing', replayed: 'string', entry: places['failed'] },
    { check: 'parity.headers.request-id', endpoint: 'GET /v1/tasks', path: 'headers.x-request-id', recorded: 'missing', replayed: 'req_ + 24 lowercase letters or digits', entry: places['list'] },
    { check: 'parity.body.values', endpoint: 'POST /v1/tasks', path: '$.error.code', recorded: 'invalid_request', replayed: 'invalid_params', entry: places['invalid'] },
    { check: 'parity.stream.events', endpoint: 'POST /v1/messages', path: 'events[1]', recorded: 'ping', replayed: 'content_block_start', entry: places['message'] },
    { check: 'parity.body.values', endpoint: 'POST /v1/messages', path: '$.stop_reason', recorded: 'stop_sequence', replayed: stopReason, entry: places['answered'] },
  ]);
  // The key went where the recording had it: x-api-key, not Authorization.
  expect(report.differences[5]?.curl).toContain("-H 'x-api-key: sk-REDACTED'");
  expect(report.differences[5]?.curl).not.toMatch(/authorization/i);
  expect(report.differences[4]?.detail).toMatch(/^recorded: message_start, ping, content_block_start, content_block_delta\*, .*; replayed: message_start, content_block_start, ping, /);
  expect(report.differences[3]?.curl).toMatch(/^curl -sS -X POST 'http:\/\/127\.0\.0\.1:\d+\/v1\/tasks' -H 'Authorization: Bearer sk-REDACTED' .*--data-raw '\{"model":"social-notes-data","input":\{\}\}'$/);
  expect(report.differences.map((d) => d.curl).join('\n')).not.toContain(DEMO_KEY);
  expect(report.differed).toBe(6);
  expect(report.parity).toBe(Math.floor((report.agreed / report.checks) * 1000) / 10);

  // What the command prints of it, and its exit code (the command's own code in this process: the CLI's exit and
  // report through the process are the test before this one's).
  const run = await parityInProcess([dir, '--base-url', await fresh(), '--admin-token', ADMIN]);
  expect(run.code).toBe(1);
  expect(run.stdout).toContain(`DIFF parity.body.values POST /v1/tasks (entry ${places['invalid']}) $.error.code\n  recorded: "invalid_request"\n  replayed: "invalid_params"\n  repro:    curl -sS -X POST`);
  expect(run.stdout).toContain(`DIFF parity.body.shape GET /v1/tasks/{id} (entry ${places['points']}) $.points.frozen\n  recorded: number\n  replayed: string\n`);
  expect(run.stdout).toMatch(/^POST \/v1\/messages: 2 exchanges\n(.*\n)* {2}parity\.stream\.events +0 agreed, 1 differed$/m);
  expect(run.stdout).toMatch(/\nparity \d+(\.\d)? %: \d+ of \d+ checks agreed, 6 differed \(6 differences\)\n$/);
}, 180_000);


it.each([
  ['no recording', ['--base-url', 'http://127.0.0.1:4010'], 'svc-emulator parity: which recording? svc-emulator parity DIR --base-url URL (DIR: a .har file or a directory of them)'],
  ['no --base-url', ['rec'], 'svc-emulator parity: --base-url is required: the deployment to replay against, as http://host:port (svc-emulator parity --help)'],
  ['a base URL without its scheme', ['rec', '--base-url', 'localhost:4010'], 'svc-emulator parity: --base-url must start with http:// or https:// (got localhost:4010; did you mean http://localhost:4010?)'],
  ['an unknown --scenarios', ['rec', '--base-url', 'http://127.0.0.1:4010', '--scenarios', 'all'], 'svc-emulator parity: --scenarios must be recorded or none (got all)'],
  ['--scenarios recorded without the admin token', ['rec', '--base-url', 'http://127.0.0.1:4010', '--scenarios', 'recorded'], 'svc-emulator parity: --scenarios recorded needs --admin-token (the scenarios are listed by the control API)'],
  ['a mistyped flag', ['rec', '--base-ulr', 'http://127.0.0.1:4010'], 'svc-emulator parity: unknown option --base-ulr; did you mean --base-url? (svc-emulator parity --help lists them)'],
])('%s: a usage error (one line, exit 2)', (_name, args, line) => {
  expect(() => parseParityOptions(args)).toThrow(new UsageError(line));
});

it('prints a usage error as one line on standard error and exits 2', async () => {
  expect(await parityCli(['rec', '--base-ulr', 'http://127.0.0.1:4010'])).toEqual({
    code: 2,
    stdout: '',
    stderr: 'svc-emulator parity: unknown option --base-ulr; did you mean --base-url? (svc-emulator parity --help lists them)\n',
  });
}, 180_000);

it('an unreadable recording, an unreachable deployment and a refused admin token: exit 2 with one line', async () => {
  const missing = join(tmpdir(), 'svc-parity-no-such-recording');
  expect(existsSync(missing)).toBe(false);
  const port = await closedPort();
  const base = await fresh();
  // A report under a regular file cannot be written (a missing folder is made: test/cli/report-paths.test.ts).
  const notAFolder = join(mkdtempSync(join(tmpdir(), 'svc-parity-')), 'a-file');
  writeFileSync(notAFolder, '');
  const unwritable = join(notAFolder, 'parity.json');
  // The command's own code in this process, one after another: the exit code it hands to process.exit and what it
  // printed (the process itself: the CLI runs above, exit 0 and a usage error's exit 2).
  const streams = ({ code, stdout, stderr }: { code: number; stdout: string; stderr: string }): CommandRun => ({ code, stdout, stderr });
  const unreadable = streams(await parityInProcess([missing, '--base-url', 'http://127.0.0.1:4010']));
  const unreachable = streams(await parityInProcess([recorded, '--base-url', `http://127.0.0.1:${port}`]));
  const refused = streams(await parityInProcess([recorded, '--base-url', base, '--admin-token', 'not-the-token']));
  // Refused before the replay, as a usage error, which src/cli/main.ts prints as its one line with exit 2.
  const unwritten = await parityInProcess([recorded, '--base-url', base, '--json', unwritable]).then(
    () => null,
    (err: unknown) => err,
  );
  expect(unreadable).toEqual({ code: 2, stdout: '', stderr: `svc-emulator parity: ${missing}: no such file or directory\n` });
  expect(unreachable).toEqual({ code: 2, stdout: '', stderr: `svc-emulator parity: cannot reach http://127.0.0.1:${port} (connection refused)\n` });
  expect(refused).toEqual({
    code: 2,
    stdout: '',
    stderr: `svc-emulator parity: ${base} refused --admin-token on GET /_emulator/clock (401): give the token the emulator was started with\n`,
  });
  expect(unwritten).toBeInstanceOf(UsageError);
  expect((unwritten as Error).message).toBe(`svc-emulator parity: --json ${unwritable}: cannot write there (${notAFolder} is a file, not a folder)`);
}, 180_000);
