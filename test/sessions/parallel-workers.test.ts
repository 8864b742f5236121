import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, expect, it } from 'vitest';
import { ADMIN, admin, killAll, startCli } from '../support/cli.ts';

// 16 vitest workers at once share one started emulator, each in a session of its own advancing its own manual clock
// through hours of virtual time, then trying every way to see or touch the others (test/sessions/workers/
// cross-talk.ts). One process, as a CI pipeline would run it; the suite's own run is the outer one.

const WORKERS = 16;
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BODY = fileURLToPath(new URL('./workers/cross-talk.ts', import.meta.url));
const CONFIG = fileURLToPath(new URL('./workers/vitest.workers.config.ts', import.meta.url));

let exchange = '';
afterEach(() => {
  killAll();
  if (exchange) rmSync(exchange, { recursive: true, force: true });
});

it(`${WORKERS} parallel vitest workers, one session each on one emulator: hours of their own time, no cross-talk`, { timeout: 240_000 }, async () => {
  exchange = mkdtempSync(join(tmpdir(), 'svc-sessions-'));
  mkdirSync(join(exchange, 'files'));
  for (let n = 1; n <= WORKERS; n++) {
    writeFileSync(join(exchange, 'files', `w${String(n).padStart(2, '0')}.worker.ts`), `import { crossTalk } from ${JSON.stringify(BODY)};\ncrossTalk(${n});\n`);
  }
  const cli = await startCli(['--memory', '--clock', 'manual', '--allow-insecure-webhooks']);
  const clockAtStart = ((await (await admin(cli, 'GET', '/_emulator/clock')).json()) as { now: string }).now;
  const run = spawn(process.execPath, [join(ROOT, 'node_modules/vitest/vitest.mjs'), 'run', '--config', CONFIG], {
    cwd: ROOT,
    env: { ...process.env, SESSIONS_BASE: cli.base, SESSIONS_ADMIN: ADMIN, SESSIONS_EXCHANGE: exchange, SESSIONS_WORKERS: String(WORKERS) },
    stdio: 'pipe',
  });
  let output = '';
  run.stdout.on('data', (c: Buffer) => (output += c.toString()));
  run.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const code = await new Promise<number | null>((resolve) => run.once('exit', resolve));
  expect(code, output).toBe(0);
  const result = JSON.parse(readFileSync(join(exchange, 'result.json'), 'utf8')) as { numPassedTests: number; numFailedTests: number; testResults: unknown[] };
  expect([result.numPassedTests, result.numFailedTests, result.testResults.length]).toEqual([WORKERS, 0, WORKERS]);
  // Every worker ended its session; the default world saw none of their hours.
  expect(((await (await admin(cli, 'GET', '/_emulator/sessions')).json()) as { data: unknown[] }).data).toEqual([]);
  expect(((await (await admin(cli, 'GET', '/_emulator/clock')).json()) as { now: string }).now).toBe(clockAtStart);
  expect(((await (await admin(cli, 'GET', '/_emulator/tasks')).json()) as { data: unknown[] }).data).toEqual([]);
});
