import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { UsageError } from '../../src/cli/args.ts';
import { parseStartOptions } from '../../src/cli/start-options.ts';
import { admin, killAll, startCli } from '../support/cli.ts';
import type { CliEmulator } from '../support/cli.ts';
import { createEmulator } from '../../src/index.ts';

// `start --scenarios DIR|FILE` adds the user's scenarios to the built-in library (issue 17, item 2): a name in
// use replaces the built-in one with a warning, a missing path is one line and exit 2. One command started with a
// folder serves the file (a reset takes it back to its start-up library); the option reaches the emulator as it
// was given (src/cli/start.ts), so a single file is shown in-process.

const SHIPPED = new URL('../../scenarios/', import.meta.url).pathname;

/** Every built-in scenario, in file order, as the shipped files list them. */
const BUILT_IN: string[] = [];
for (const name of (await readdir(SHIPPED)).filter((n) => /\.(ya?ml|json)$/.test(n)).sort()) {
  BUILT_IN.push(...(parse(await readFile(join(SHIPPED, name), 'utf8')) as { scenarios: { name: string }[] }).scenarios.map((s) => s.name));
}

const MINE = ['scenarios:', '  - name: timeout', '    queue_seconds: 7', '    outcome: succeeded', '  - name: mine', '    outcome: succeeded', ''].join('\n');

let dir: string;
let cli: CliEmulator;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-cli-scenarios-'));
  await writeFile(join(dir, 'mine.yaml'), MINE);
  cli = await startCli(['--memory', '--scenarios', dir]);
});
afterAll(async () => {
  killAll();
  await rm(dir, { recursive: true, force: true });
});

interface Listed {
  name: string;
  queue_seconds: number;
  outcome: string;
}
const scenarios = async (cli: CliEmulator): Promise<Listed[]> => ((await (await admin(cli, 'GET', '/_emulator/scenarios')).json()) as { data: Listed[] }).data;
const names = async (cli: CliEmulator): Promise<string[]> => (await scenarios(cli)).map((s) => s.name);

/** The usage error a start with these options stops with (one line on standard error, exit 2: src/cli/main.ts). */
function refusedStart(args: string[], env: Record<string, string> = {}): string {
  try {
    parseStartOptions(['--port', '0', '--memory', ...args], env);
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return (err as Error).message;
  }
  throw new Error('the options were taken');
}

it('adds the scenarios of a folder to the built-in ones, and warns of the one that replaces a built-in', async () => {
  expect(BUILT_IN).toEqual(expect.arrayContaining(['default', 'timeout', 'instant']));
  expect(BUILT_IN.some((name) => name.startsWith('text-'))).toBe(true);
  // On standard error, which the test reads apart from the banner.
  await cli.printed(/replaces the built-in one/);
  // One line, after the log's time of day (HH:MM:SS.mmm).
  const said = cli.output().split('\n').filter((line) => line.includes('replaces'));
  expect(said.map((line) => line.slice(13))).toEqual([`warn  scenario 'timeout' from ${join(dir, 'mine.yaml')} replaces the built-in one`]);
  // The user's come first (their match rules are tried first); every other built-in stays, text ones included.
  expect(await names(cli)).toEqual(['timeout', 'mine', ...BUILT_IN.filter((name) => name !== 'timeout')]);
  expect((await scenarios(cli))[0]).toMatchObject({ name: 'timeout', queue_seconds: 7, outcome: 'succeeded' });
});

it('takes a single scenario file, and only that file', async () => {
  const folder = join(dir, 'single');
  await mkdir(folder);
  await writeFile(join(folder, 'mine.yaml'), MINE);
  await writeFile(join(folder, 'other.yaml'), ['scenarios:', '  - name: other', '    outcome: succeeded', ''].join('\n'));
  const { scenariosDir } = parseStartOptions(['--memory', '--scenarios', join(folder, 'mine.yaml')], {});
  const emulator = await createEmulator({ clock: 'manual', adminToken: 'a', log: () => undefined, ...(scenariosDir ? { scenariosDir } : {}) });
  try {
    const base = await emulator.listen(0);
    const listed = ((await (await fetch(`${base}/_emulator/scenarios`, { headers: { Authorization: 'Bearer a' } })).json()) as { data: Listed[] }).data;
    expect(listed.map((s) => s.name)).toEqual(['timeout', 'mine', ...BUILT_IN.filter((name) => name !== 'timeout')]);
  } finally {
    await emulator.close();
  }
});

it('keeps run-time loads working, and a reset goes back to the start-up library: built-ins and the folder', async () => {
  const startUp = await scenarios(cli);
  const loaded = await admin(cli, 'POST', '/_emulator/scenarios', { scenarios: [{ name: 'mine', queue_seconds: 99, outcome: 'succeeded' }, { name: 'instant', queue_seconds: 5, outcome: 'succeeded' }] });
  expect(loaded.status).toBe(201);
  const during = await scenarios(cli);
  expect(during.slice(0, 2)).toMatchObject([{ name: 'mine', queue_seconds: 99 }, { name: 'instant', queue_seconds: 5 }]);
  expect(during.filter((s) => s.name === 'mine')).toHaveLength(1);
  expect((await admin(cli, 'POST', '/_emulator/reset')).status).toBe(200);
  expect(await scenarios(cli)).toEqual(startUp);
});

it.each([
  ['a folder', 'no-such-folder'],
  ['a file', 'no-such-file.yaml'],
])('stops with one line when --scenarios names %s that does not exist', (_what, name) => {
  const missing = join(dir, name);
  expect(refusedStart(['--scenarios', missing])).toBe(`svc-emulator start: --scenarios ${missing}: no such file or folder`);
});

it('names the environment variable when the missing path came from it', () => {
  const missing = join(dir, 'gone');
  expect(refusedStart([], { SVC_EMULATOR_SCENARIOS: missing })).toBe(`svc-emulator start: SVC_EMULATOR_SCENARIOS=${missing}: no such file or folder`);
});
