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

/** A state document of a real emulator: its demo account, a submitted task, and its call records. */
async function sample(): Promise<StateDocument> {
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

/** `count` call records of text calls whose content was kept (--record-content): 10 KB each. */
function bulkyCalls(template: CallRecord, count: number): CallRecord[] {
  const output = 'All work and no play. '.repeat(460);
  return Array.from({ length: count }, (_, i) => ({
    ...template,
    request_id: `req_bulk${String(i).padStart(20, '0')}`,
    text: { stream: false, input_tokens: 5, output_tokens: 2500, points: { frozen: '1.000', charged: '1.000', refunded: '0.000' }, client_closed: false, content: { prompt: ['Hello'], output } },
  }));
}

/** A store file of about `mb` MB: a real store with that many MB of kept text-call records. */
async function storeOf(path: string, mb: number): Promise<void> {
  const emulator = await createEmulator({ db: path, clock: 'manual', adminToken: 'a', log: () => undefined });
  const [template] = (await sample()).calls;
  if (!template) throw new Error('the sample made no call record');
  emulator.internals.store.transaction(() => {
    for (const call of bulkyCalls(template, mb * 100)) emulator.internals.db.calls.put(call, emulator.clock.now());
  });
  await emulator.close();
}

it('says nothing more for a small store or one in memory', async () => {
  const small = await startCli(['--db', join(dir, 'store.db'), '--log-level', 'info']);
  const memory = await startCli(['--memory', '--log-level', 'info']);
  expect(await startLog(small)).toEqual([]);
  expect(await startLog(memory)).toEqual([]);
}, HEAVY);

it('says it opens a big store (past LONG_FILE_BYTES), with its size, and how long that took; then the same of the check in the background', async () => {
  const path = join(dir, 'store.db');
  await storeOf(path, 40);
  const mb = megabytes(path);
  expect(mb * 1024 ** 2).toBeGreaterThanOrEqual(LONG_FILE_BYTES);
  const cli = await startCli(['--db', path, '--log-level', 'info']);
  await cli.printed(/checking the store .* in the background: done/);
  const said = await startLog(cli);
  expect(said).toHaveLength(4);
  expect(said[0]).toBe(`info  opening the store ${path} (${mb} MB, checked in the background once open)`);
  expect(said[1]).toMatch(new RegExp(`^info  opening the store ${path}${DONE.source}`));
  expect(said[2]).toBe(`info  checking the store ${path} in the background (${mb} MB)`);
  expect(said[3]).toMatch(new RegExp(`^info  checking the store ${path} in the background${DONE.source}`));
}, HEAVY);

it('says it imports a big state document, and schedules many unfinished tasks, and how long each took', async () => {
  const state = await sample();
  const [queued] = state.tasks;
  const [template] = state.calls;
  if (!queued || !template) throw new Error('the sample made no task or call record');
  expect(queued.task.status).toBe('queued');
  // Task ids of the emulator's form (a state document is checked field by field): the time, then 6 characters.
  state.tasks = Array.from({ length: LONG_TASK_COUNT }, (_, i) => ({ ...queued, seq: i + 1, task: { ...queued.task, id: `T261123090000${i.toString(36).toUpperCase().padStart(6, '0')}` } }));
  state.calls = bulkyCalls(template, 3500);
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

it('says it reads and imports a big journal store, once', async () => {
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
    ...bulkyCalls(template, 3500).map((call) => ['calls', call.request_id, call]),
  ];
  await writeFile(path, lines.map((line) => JSON.stringify(line)).join('\n') + '\n');
  const mb = megabytes(path);
  expect(mb * 1024 ** 2).toBeGreaterThanOrEqual(LONG_FILE_BYTES);
  const cli = await startCli(['--db', path, '--log-level', 'info']);
  const said = await startLog(cli);
  expect(said).toEqual([
    `info  reading the journal store ${path} (${mb} MB, imported once)`,
    expect.stringMatching(new RegExp(`^info  reading the journal store ${path}${DONE.source}`)),
    `info  importing the journal store ${path} into the store (0 tasks, 3500 call records)`,
    expect.stringMatching(new RegExp(`^info  importing the journal store ${path} into the store${DONE.source}`)),
  ]);
  cli.child.kill('SIGTERM');
  expect(await cli.exited).toBe(0);
  // Once: the next start opens the SQLite store that took its place (now a big one), as any other.
  const again = await startCli(['--db', path, '--log-level', 'info']);
  await again.printed(/checking the store .* in the background: done/);
  expect(infoLines(again.output())).toEqual([
    `info  opening the store ${path} (${megabytes(path)} MB, checked in the background once open)`,
    expect.stringMatching(new RegExp(`^info  opening the store ${path}${DONE.source}`)),
    `info  checking the store ${path} in the background (${megabytes(path)} MB)`,
    expect.stringMatching(new RegExp(`^info  checking the store ${path} in the background${DONE.source}`)),
  ]);
}, HEAVY);
