import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseStartOptions, START_HELP } from '../../src/cli/start-options.ts';
import { connectionBudget, FALLBACK_CAP, openFileLimit } from '../../src/server/index.ts';
import { DEMO_KEY, heldPost, killAll, startCli } from '../support/cli.ts';
import type { CliEmulator } from '../support/cli.ts';
import { cliBin } from '../support/cli-build.ts';

// The default connection cap sits below the process's open-file limit, and reaching the cap is logged once per
// burst (issue 17, item 10): 21,000 idle connections once ran the descriptors out and every new client was
// reset, with nothing logged. Only connections with a request in flight hold the cap here: idle ones give way.
// One command capped at 5 serves the bursts and the banner of a cap given; the default cap is shown under a known
// open-file limit (ulimit -n 256).

const linux = process.platform === 'linux';

let capped: CliEmulator;
beforeAll(async () => {
  capped = await startCli(['--memory', '--max-connections', '5', '--log-level', 'info']);
});
afterAll(() => killAll());

const TASK = JSON.stringify({ model: 'video-gen-2.0-fast', input: { prompt: 'a cat surfing' } });

/**
 * A connection with a request in flight (an upload whose body is still to come), so the server counts it and never
 * closes it to make room: only idle ones give way to new clients (test/cli/idle-connections.test.ts).
 */
const busy = (cli: CliEmulator): ReturnType<typeof heldPost> =>
  heldPost(cli, '/v1/tasks', { Authorization: `Bearer ${DEMO_KEY}`, 'Content-Type': 'application/json' }, Buffer.byteLength(TASK));

/** A connection over the cap: resolves with what it received before the server closed it. */
async function refused(cli: CliEmulator): Promise<string> {
  const socket = connect(cli.port, '127.0.0.1');
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
  socket.on('error', () => undefined);
  socket.once('connect', () => socket.write('GET /_emulator/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'));
  await new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return received;
}

const lines = (cli: CliEmulator, text: string): string[] => cli.output().split('\n').filter((line) => line.includes(text));

it('warns once when the cap turns a burst of clients away, counts them when there is room again, and serves on', async () => {
  const cli = capped;
  const open = await Promise.all(Array.from({ length: 5 }, () => busy(cli)));
  expect(await Promise.all([refused(cli), refused(cli), refused(cli)])).toEqual(['', '', '']);
  await cli.printed(/connection cap reached/);
  expect(lines(cli, 'connection cap reached').map((line) => line.slice(13))).toEqual([
    `warn  connection cap reached: 5 connections are open, so the longest-idle connections are closed to make room for new ones, and new ones are closed unanswered while none is idle; raise it with --max-connections${linux ? ` (the open-file limit, ulimit -n, is ${openFileLimit()})` : ''}`,
  ]);

  for (const connection of open) connection.req.destroy();
  await cli.printed(/below it again/);
  expect(lines(cli, 'below it again').map((line) => line.slice(13))).toEqual([
    'warn  connection cap: 0 idle connection(s) were closed to make room and 3 new one(s) were closed unanswered while at the cap of 5; below it again',
  ]);
  const res = await fetch(`${cli.base}/_emulator/health`, { headers: { Connection: 'close' } });
  expect(res.status).toBe(200);
  // A second burst warns again.
  const again = await Promise.all(Array.from({ length: 5 }, () => busy(cli)));
  expect(await refused(cli)).toBe('');
  await cli.printed(/connection cap reached[^]*connection cap reached/);
  for (const connection of again) connection.req.destroy();
});

it('says the cap in force in the start banner: the open-file limit less a reserve, or the one given', async () => {
  expect(lines(capped, '  connections  ')).toEqual(['  connections  at most 5 (--max-connections 5)']);
  // The default: under a known open-file limit on Linux (as the next test shows in --help too); elsewhere none is known.
  const defaulted = linux ? (await defaultUnderUlimit()).stdout : (await startCli(['--memory', '--log-level', 'info'])).output();
  expect(defaulted.split('\n').filter((line) => line.startsWith('  connections  '))).toEqual([
    linux ? '  connections  at most 128 (ulimit -n 256, less 128 kept for the store, files and callbacks)' : `  connections  at most ${FALLBACK_CAP} (the open-file limit is unknown here)`,
  ]);
  const budget = connectionBudget(openFileLimit(), 256);
  if (budget.openFiles !== null) expect(budget.cap).toBeLessThan(budget.openFiles);
});

/** `svc-emulator ARGS` under `ulimit -n 256`, to its end or until the banner is out. */
function underUlimit(args: string[]): Promise<{ stdout: string; stderr: string }> {
  const child = spawn('sh', ['-c', 'ulimit -n 256 && exec "$0" "$@"', process.execPath, cliBin(), ...args], { stdio: 'pipe' });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => {
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.includes('admin token')) child.kill('SIGKILL');
    });
    child.once('close', () => resolve({ stdout, stderr }));
  });
}

/** `svc-emulator start` with the default cap under `ulimit -n 256`, once for the file. */
let defaultStart: ReturnType<typeof underUlimit> | null = null;
const defaultUnderUlimit = (): ReturnType<typeof underUlimit> => (defaultStart ??= underUlimit(['start', '--memory', '--port', '0']));

it.runIf(linux)('sets the default cap below a small open-file limit, in the banner and in --help', async () => {
  const started = await defaultUnderUlimit();
  expect(started.stdout).toContain('\n  connections  at most 128 (ulimit -n 256, less 128 kept for the store, files and callbacks)\n');
  expect(started.stderr).toBe('');
  const help = await underUlimit(['start', '--help']);
  expect(help.stdout).toContain('(default 128 here: ulimit -n 256, less 128 kept for the store, files and callbacks)');
});

it.runIf(linux)('warns at start of a --max-connections the open-file limit cannot hold, naming where it came from', async () => {
  const started = await underUlimit(['start', '--memory', '--port', '0', '--max-connections', '1000']);
  expect(started.stdout).toContain('\n  connections  at most 1000 (--max-connections 1000)\n');
  expect(started.stderr.split('\n').filter(Boolean).map((line) => line.slice(13))).toEqual([
    'warn  --max-connections 1000: above the 128 connections the open-file limit leaves room for (ulimit -n 256, less 128 kept for the store, files and callbacks); past that, new clients may be reset with nothing logged. Raise ulimit -n, or lower the cap',
  ]);
});

it.each([
  ['a Linux default', 1024, 256, { cap: 704, reserve: 320 }],
  ['a raised limit', 1_048_576, 256, { cap: 1_048_256, reserve: 320 }],
  ['a small limit, shared half and half', 256, 256, { cap: 128, reserve: 128 }],
  ['fewer callback sends', 1024, 16, { cap: 944, reserve: 80 }],
  ['an unknown limit', null, 256, { cap: FALLBACK_CAP, reserve: 0 }],
])('budgets connections for %s', (_name, openFiles, sends, expected) => {
  expect(connectionBudget(openFiles, sends)).toEqual({ openFiles, ...expected });
});

it.each([
  ['a soft limit', 'Max open files            1024                 524288               files     \n', 1024],
  ['an unlimited one', 'Max open files            unlimited            unlimited            files     \n', null],
  ['no such line', 'Max processes             63704                63704                processes \n', null],
])('reads the open-file limit from /proc/self/limits: %s', (_name, text, expected) => {
  expect(openFileLimit(() => `Limit                     Soft Limit           Hard Limit           Units     \n${text}`)).toBe(expected);
});

it('has no limits file to read off Linux, and falls back', () => {
  expect(openFileLimit(() => {
    throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
  })).toBeNull();
});

it('fills the cap from the budget unless one is given, and counts the callback sends in the reserve', () => {
  const openFiles = openFileLimit();
  expect(parseStartOptions([], {}).limits?.maxConnections).toBe(connectionBudget(openFiles, 256).cap);
  expect(parseStartOptions(['--webhook-concurrency', '16'], {}).limits?.maxConnections).toBe(connectionBudget(openFiles, 16).cap);
  expect(parseStartOptions([], { SVC_EMULATOR_MAX_CONNECTIONS: '7' }).connections).toMatchObject({ max: 7, given: 'SVC_EMULATOR_MAX_CONNECTIONS=7', warnings: [] });
  expect(START_HELP).toContain(`(default ${connectionBudget(openFiles, 256).cap} here: `);
});
