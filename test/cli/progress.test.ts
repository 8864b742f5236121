import { statSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { CallRecord } from '../../src/calls/index.ts';
import { createEmulator } from '../../src/index.ts';
import { LONG_FILE_BYTES, LONG_TASK_COUNT } from '../../src/log/progress.ts';
import { exportState } from '../../src/state/index.ts';
import type { StateDocument } from '../../src/state/index.ts';
import { killAll, startCli } from '../support/cli.ts';
import type { CliEmulator } from '../support/cli.ts';

// Start-up work that can take long says what it is doing, on which file and how big, and how long it took
// (issue 17, item 5): a 240 MB store once took 17 s to start without a word. Small stores stay quiet.
// The big files are just past LONG_FILE_BYTES (32 MB): what the lines say does not grow with the file, the time to
// write, read and check it does.

/** What a progress line says, without the log's time of day. */
const DONE = /: done in \d+\.\d s$/;

/** Tens of MB written, read and checked, and a process started, per test: minutes on a busy machine, not a hang. */
const HEAVY = 240_000;

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-cli-progress-'));
});
afterEach(async () => {
  killAll();
  await rm(dir, { recursive: true, force: true });
});

/** The info lines a start printed on the way, without their time of day. */
const infoLines = (output: string): string[] =>
  output
    .split('\n')
    .filter((line) => / info {2}/.test(line) && !/ (GET|POST) \//.test(line))
    .map((line) => line.slice(13));

/**
 * Everything the start logged: its lines on standard error, whose pipe the test reads apart from the banner's.
 * A request's log line comes after them on that pipe, so once it is in, they are.
 */
async function startLog(cli: CliEmulator): Promise<string[]> {
  await fetch(`${cli.base}/_emulator/health`, { headers: { Connection: 'close' } });
  await cli.printed(/GET \/_emulator\/health 200/);
  return infoLines(cli.output());
}

const megabytes = (path: string): number => Math.round(statSync(path).size / 1024 ** 2);

/** A state document of a real emulator: its demo account, a submitted task, and its call records (a copy each call). */
let sampled: Promise<StateDocument> | null = null;
const sample = async (): Promise<StateDocument> => structuredClone(await (sampled ??= made()));
async function made(): Promise<StateDocument> {
  const emulator = await createEmulator({ clock: 'manual', adminToken: 'a', log: () => undefined });
  try {
    const base = await emulator.listen(0);
    const res = await fetch(`${base}/v1/tasks`, {
      method: 'POST',
      headers: { Authorization: 'Bearer sk-emulator-demo', 'Content-Type': 'application/json', 'X-Emulator-Scenario': 'timeout-in-queue' },
      body: JSON.stringify({ model: 'social-notes-data', input: { mode: 'note', note: 'https://notes.example.com/n/1', agree: true } }),
    });
    expect(res.status).toBe(200);
    return exportState(emulator.internals.db, emulator.clock.now());
  } finally {
    await emulator.close();
  }
}

/** A text call whose content was kept (--record-content): about 10 KB of JSON. */
const bulkyCall = (template: CallRecord, i: number): CallRecord => ({
  ...template,
  request_id: `req_bulk${String(i).padStart(20, '0')}`,
  text: {
    stream: false,
    input_tokens: 5,
    output_tokens: 2500,
    points: { frozen: '1.000', charged: '1.000', refunded: '0.000' },
    client_closed: false,
    content: { prompt: ['Hello'], output: 'All work and no play. '.repeat(460) },
  },
});

/**
 * As many bulky call records as take a file that already holds `bytes` 1 MB past LONG_FILE_BYTES, each written as
 * the JSON of `written(call)` and a separator: a big file, and no bigger than it need be.
 */
function bulkyCallsPast(template: CallRecord, bytes: number, written: (call: CallRecord) => unknown = (call) => call): CallRecord[] {
  const each = JSON.stringify(written(bulkyCall(template, 0))).length + 1;
  const count = Math.max(0, Math.ceil((LONG_FILE_BYTES + 1024 ** 2 - bytes) / each));
  return Array.from({ length: count }, (_, i) => bulkyCall(template, i));
}

/** The start-up lines an in-process emulator says at info: what the CLI prints, without the time of day. */
async function inProcessLines(options: Parameters<typeof createEmulator>[0]): Promise<string[]> {
  const said: string[] = [];
  const logger = { debug: () => undefined, info: (message: string) => void said.push(`info  ${message}`), warn: () => undefined, error: () => undefined };
  const emulator = await createEmulator({ clock: 'manual', adminToken: 'a', log: () => undefined, ...options, logger });
  await emulator.close();
  return said;
}

it('says nothing more for a small store or one in memory', async () => {
  // The command, on a small store file: nothing at info but the request's own line.
  const small = await startCli(['--db', join(dir, 'store.db'), '--log-level', 'info']);
  expect(await startLog(small)).toEqual([]);
  // In memory: the lines come from the emulator the command builds (as the big ones below show), here none.
  expect(await inProcessLines({})).toEqual([]);
}, HEAVY);

it('says it imports a big state document, and schedules many unfinished tasks, and how long each took', async () => {
  const state = await sample();
  const [queued] = state.tasks;
  const [template] = state.calls;
  if (!queued || !template) throw new Error('the sample made no task or call record');
  expect(queued.task.status).toBe('queued');
  // Task ids of the emulator's form (a state document is checked field by field): the time, then 6 characters.
  state.tasks = Array.from({ length: LONG_TASK_COUNT }, (_, i) => ({ ...queued, seq: i + 1, task: { ...queued.task, id: `T261123090000${i.toString(36).toUpperCase().padStart(6, '0')}` } }));
  // The tasks make a good part of the document; the call records the rest.
  state.calls = bulkyCallsPast(template, JSON.stringify(state).length);
  const path = join(dir, 'state.json');
  await writeFile(path, JSON.stringify(state));
  const mb = megabytes(path);
  expect(mb * 1024 ** 2).toBeGreaterThanOrEqual(LONG_FILE_BYTES);
  const cli = await startCli(['--memory', '--clock', 'manual', '--import', path, '--log-level', 'info']);
  const said = await startLog(cli);
  expect(said).toHaveLength(6);
  // Read and checked whole before the store opens (a refused document leaves the store untouched), then imported.
  expect(said[0]).toBe(`info  reading the state document ${path} (${mb} MB, checked before the store opens)`);
  expect(said[1]).toMatch(new RegExp(`^info  reading the state document ${path}${DONE.source}`));
  expect(said[2]).toBe(`info  importing the state document ${path} (${mb} MB, replacing what the store holds)`);
  expect(said[3]).toMatch(new RegExp(`^info  importing the state document ${path}${DONE.source}`));
  expect(said[4]).toBe(`info  scheduling ${LONG_TASK_COUNT} unfinished tasks`);
  expect(said[5]).toMatch(new RegExp(`^info  scheduling ${LONG_TASK_COUNT} unfinished tasks${DONE.source}`));
}, HEAVY);

it('says it reads and imports a big journal store, once; then opens the big store it became, with its size, and checks it in the background', async () => {
  const state = await sample();
  const [template] = state.calls;
  if (!template) throw new Error('the sample made no call record');
  const path = join(dir, 'db.json');
  // The journal engine's snapshot: a header line, then one [section, key, value] line per record.
  const lines: unknown[] = [
    { format: 'svc-emulator-store', version: 1, generation: 0 },
    ...state.accounts.map((account) => ['accounts', account.id, account]),
    ...state.keys.map((key) => ['keys', key.key, key]),
    ...state.ledger.map((entry, i) => ['ledger', String(i), entry]),
  ];
  const line = (call: CallRecord): unknown => ['calls', call.request_id, call];
  const calls = bulkyCallsPast(template, lines.map((l) => JSON.stringify(l).length + 1).reduce((a, b) => a + b, 0), line);
  lines.push(...calls.map(line));
  await writeFile(path, lines.map((line) => JSON.stringify(line)).join('\n') + '\n');
  const mb = megabytes(path);
  expect(mb * 1024 ** 2).toBeGreaterThanOrEqual(LONG_FILE_BYTES);
  const cli = await startCli(['--db', path, '--log-level', 'info']);
  const said = await startLog(cli);
  expect(said).toEqual([
    `info  reading the journal store ${path} (${mb} MB, imported once)`,
    expect.stringMatching(new RegExp(`^info  reading the journal store ${path}${DONE.source}`)),
    `info  importing the journal store ${path} into the store (0 tasks, ${calls.length} call records)`,
    expect.stringMatching(new RegExp(`^info  importing the journal store ${path} into the store${DONE.source}`)),
  ]);
  cli.child.kill('SIGTERM');
  expect(await cli.exited).toBe(0);

  // Once: the next start opens the SQLite store that took its place, a big store (past LONG_FILE_BYTES) as any
  // other, saying so with its size and how long that took; then the same of the check in the background.
  const big = megabytes(path);
  expect(statSync(path).size).toBeGreaterThanOrEqual(LONG_FILE_BYTES);
  const again = await startCli(['--db', path, '--log-level', 'info']);
  await again.printed(/checking the store .* in the background: done/);
  expect(await startLog(again)).toEqual([
    `info  opening the store ${path} (${big} MB, checked in the background once open)`,
    expect.stringMatching(new RegExp(`^info  opening the store ${path}${DONE.source}`)),
    `info  checking the store ${path} in the background (${big} MB)`,
    expect.stringMatching(new RegExp(`^info  checking the store ${path} in the background${DONE.source}`)),
  ]);
}, HEAVY);
