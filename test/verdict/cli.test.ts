import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { ADMIN, killAll, startCli } from '../support/cli.ts';
import { runCommand } from '../support/command.ts';

// `svc-emulator verdict` against a started `svc-emulator start`: a careless client's run is judged through the
// control API, the failed check is printed with its evidence and written as a JUnit failure, and the exit code is 1
// (what fails a CI job).

let dir = '';
afterEach(async () => {
  killAll();
  if (dir) await rm(dir, { recursive: true, force: true });
});

it('prints each check, writes JUnit with the failed one as a failure, and exits 1', async () => {
  const cli = await startCli([]);
  dir = await mkdtemp(join(tmpdir(), 'svc-verdict-'));
  const key = `sk-unknown-${randomUUID()}`;
  const send = () => fetch(`${cli.base}/v1/models`, { headers: { Authorization: `Bearer ${key}`, Connection: 'close' } });
  const [first, second] = [await send(), await send()];
  expect([first.status, second.status]).toEqual([401, 401]);
  const ids = [first.headers.get('x-request-id'), second.headers.get('x-request-id')];

  const junit = join(dir, 'verdict.xml');
  const run = await runCommand(['verdict', '--base-url', cli.base, '--admin-token', ADMIN, '--key', key, '--junit', junit], 30_000);
  expect(run.code, run.stderr).toBe(1);
  expect(run.stdout).toContain(`FAIL client.errors.not-retried: GET /v1/models sent again unchanged after 401 invalid_api_key [${ids.join(', ')}]`);
  expect(run.stdout).toMatch(/^n\/a {2}client\.retry-after\.respected: no 429 with Retry-After was answered$/m);
  expect(run.stdout).toMatch(/^verdict \(key sk-unkno…\): 0 passed, 1 failed, 9 not exercised$/m);

  const xml = await readFile(junit, 'utf8');
  expect(xml).toContain('<testsuites name="svc-emulator verdict" tests="10" failures="1" errors="0" skipped="9">');
  expect(xml).toMatch(/<testcase classname="verdict\.client" name="client\.errors\.not-retried"><failure message="GET \/v1\/models sent again unchanged after 401 invalid_api_key" type="client\.errors\.not-retried">/);
  expect(xml).toContain(`evidence: ${ids.join(', ')}`);
});
