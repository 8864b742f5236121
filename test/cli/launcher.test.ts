import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';

// A script or CI step that starts the emulator through npm in the background and stops it with `kill $!` stops
// npm, which forwards no signal: the emulator must leave with it, not live on holding its port. Run as a user's
// script runs, in a non-interactive shell.

const run = promisify(execFile);
const ROOT = new URL('../..', import.meta.url).pathname;
const dir = await mkdtemp(join(tmpdir(), 'svc-launcher-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

/** Starts `command` in the background of a shell, waits for it to listen, kills the launcher, and tells what became of the emulator. */
async function startAndKill(command: string): Promise<{ base: string; log: string; afterKill: string }> {
  const log = join(dir, `${Date.now()}.log`);
  const script = `${command} >'${log}' 2>&1 &
launcher=$!
i=0; until grep -q 'listening on' '${log}'; do i=$((i+1)); [ $i -gt 1200 ] && exit 3; sleep 0.1; done
kill $launcher`;
  // npx and npm start a node of their own before the emulator's: on a busy machine that alone takes many seconds.
  await run('sh', ['-c', script], { cwd: ROOT, timeout: 150_000 });
  const base = /listening on (http:\/\/\S+)/.exec(await readFile(log, 'utf8'))?.[1] ?? '';
  // The emulator closes within its own second of npm's going; then its port refuses. Only a refusal ends the wait
  // (an answer slow to come is a busy machine's, not a closed port), for up to a minute.
  let afterKill = 'still answering';
  for (const until = Date.now() + 60_000; Date.now() < until && afterKill === 'still answering'; ) {
    try {
      await fetch(`${base}/_emulator/health`, { headers: { Connection: 'close' }, signal: AbortSignal.timeout(5_000) });
      await new Promise((resolve) => setTimeout(resolve, 100));
    } catch (err) {
      if ((err as { cause?: { code?: string } }).cause?.code === 'ECONNREFUSED') afterKill = 'refused';
    }
  }
  return { base, log: await readFile(log, 'utf8'), afterKill };
}

it.each([
  ['npx svc-emulator start', 'npx --no-install svc-emulator start --memory --port 0'],
  ['npm start', 'npm start -- --memory --port 0'],
])('stops the emulator started by %s when the script kills that command', async (_form, command) => {
  const { base, log, afterKill } = await startAndKill(command);
  expect(base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  expect(afterKill, log).toBe('refused');
  expect(log).toMatch(/svc-emulator: npm \(process \d+\), which started it, has gone/);
  expect(log).toContain('svc-emulator: closed, store flushed');
}, 240_000);

it.each([
  ['receive', 'npx --no-install svc-emulator receive --secret whsec_ZGVtby1zZWNyZXQtZm9yLXN2Yy1lbXVsYXRvcg== --port 0'],
  ['proxy', 'npx --no-install svc-emulator proxy --upstream http://127.0.0.1:9 --port 0'],
])('stops svc-emulator %s started through npx when the script kills npx', async (_command, command) => {
  const { base, log, afterKill } = await startAndKill(command);
  expect(base).toMatch(/^http:\/\/127\.0\.0\.1:\d+/);
  expect(afterKill, log).toBe('refused');
  expect(log).toMatch(/svc-emulator: npm \(process \d+\), which started it, has gone/);
}, 240_000);
