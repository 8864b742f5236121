import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.ts';
import { DEMO_KEY, killAll, runCli, startCli } from '../support/cli.ts';
import type { CliEmulator } from '../support/cli.ts';
import { socialNote } from '../support/harness.ts';
import { storeInProcess } from '../support/shared-in-process.ts';

/**
 * The store commands beside a running emulator and on bad paths: `store check` reads one snapshot, so a commit
 * between two of its reads is never taken for damage; a backup's folder is made like every report's; a target that
 * cannot be written, a `--db` that is a folder: one line and exit 2, like every other bad input, never a stack trace.
 */

let dir: string;
let path: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-store-commands-'));
  path = join(dir, 'store.db');
});
afterEach(async () => {
  killAll();
  await rm(dir, { recursive: true, force: true });
});

/** Submits in `loops` parallel loops until `stop()`: every one freezes points, a commit of balances and ledger. */
function writeLoad(cli: CliEmulator, loops: number): { accepted: () => number; stop: () => Promise<void> } {
  let running = true;
  let accepted = 0;
  const loop = async (): Promise<void> => {
    while (running) {
      const res = await fetch(`${cli.base}/v1/tasks`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${DEMO_KEY}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(socialNote()),
      });
      await res.arrayBuffer();
      if (res.status === 200) accepted += 1;
    }
  };
  const all = Promise.all(Array.from({ length: loops }, loop));
  return {
    accepted: () => accepted,
    stop: async () => {
      running = false;
      await all;
    },
  };
}

it('finds a store sound, run after run, while the emulator beside it commits submits all the time', async () => {
  const cli = await startCli(['--db', path, '--clock', 'manual']);
  const load = writeLoad(cli, 4);
  const answers = new Set<string>();
  let checks = 0;
  try {
    // Checks until commits were made beside them (however slow the machine): each between two commits.
    const from = load.accepted();
    while (checks < 6 || load.accepted() - from < 40) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      const check = await storeInProcess(['check', '--db', path]);
      answers.add(`${check.code} ${check.output.trim()}`);
      checks += 1;
      if (checks > 200) throw new Error(`only ${load.accepted() - from} submits accepted beside ${checks} checks`);
    }
  } finally {
    await load.stop();
  }
  expect([...answers]).toEqual([`0 ${path}: sound (integrity check ok, every balance agrees with its ledger)`]);
});

it('backs up into a folder that does not exist yet (made, as every file a command writes), and exports there', async () => {
  await openStore({ path }).close();
  const target = join(dir, 'no', 'such', 'backup.db');
  expect(await runCli(['store', 'backup', '--db', path, target])).toMatchObject({ code: 0, stdout: `${path}: backed up to ${target}\n` });
  expect(await storeInProcess(['check', '--db', target])).toMatchObject({ code: 0 });
  const state = join(dir, 'other', 'state.json');
  expect(await storeInProcess(['export', '--db', target, state])).toMatchObject({ code: 0 });
});

it('refuses a backup under a file, or over a folder, with one line, exit 2', async () => {
  await openStore({ path }).close();
  writeFileSync(join(dir, 'a-file'), 'x');
  for (const [target, why] of [
    [join(dir, 'a-file', 'backup.db'), 'is a file, not a folder'],
    [dir, 'a folder, not a file'],
  ] as const) {
    const backup = await runCli(['store', 'backup', '--db', path, target]);
    expect({ code: backup.code, lines: backup.output.trim().split('\n') }).toEqual({ code: 2, lines: [expect.stringMatching(new RegExp(`^svc-emulator store: backup ${target}: cannot write there \\(.*${why}\\)$`))] });
  }
});

it('refuses a --db that is a folder with one line, exit 2: the start, store check, backup and export', async () => {
  const folder = join(dir, 'a-folder');
  mkdirSync(folder);
  for (const args of [
    ['start', '--port', '0', '--db', folder],
    ['store', 'check', '--db', folder],
    ['store', 'backup', '--db', folder, join(dir, 'backup.db')],
    ['store', 'export', '--db', folder, join(dir, 'state.json')],
  ]) {
    const run = await runCli(args);
    expect({ args, code: run.code, lines: run.output.trim().split('\n') }).toEqual({ args, code: 2, lines: [expect.stringContaining(`${folder}: a folder, not a store file`)] });
  }
});
