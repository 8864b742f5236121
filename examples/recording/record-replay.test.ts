import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { cliBin } from '../../test/support/cli-build.ts';

// The worked example as a user runs it: record.sh's three commands against a stand-in for the real service, in a
// fresh folder. What it must show: a clean proxy run, the import summary, and parity 100 %. Its command is the
// checkout's as the other CLI tests lay it out (SVC_EMULATOR_BIN: test/support/cli-build.ts).

const SCRIPT = new URL('./record-replay.sh', import.meta.url).pathname;
const work = mkdtempSync(join(tmpdir(), 'svc-record-replay-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

it('records an integrator\'s traffic through the proxy, imports it, and replays it against an emulator at parity 100 %', async () => {
  const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const env: NodeJS.ProcessEnv = { ...process.env, SVC_EMULATOR_BIN: cliBin() };
    delete env['UPSTREAM'];
    execFile('bash', [SCRIPT, work], { env, timeout: 240_000 }, (error, out, err) => resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout: out, stderr: err }));
  });
  expect(code, `${stdout}\n${stderr}`).toBe(0);
  expect(stdout).toContain('task: succeeded, charged 40.000');
  // How many exchanges depends on how often the client polled the task (a round trip's time); each was checked.
  const checked = /^proxy stopped: (\d+) exchanges checked, 0 deviations/m.exec(stdout);
  expect(checked, stdout).not.toBeNull();
  expect(stdout).toMatch(/^imported 1 task: recorded-t\d{12}[a-z0-9]{6}$/m);
  expect(stdout).toContain('imported 3 text calls');
  expect(stdout).toMatch(/^parity 100 %: (\d+) of \1 checks agreed, 0 differed/m);

  const recorded = join(work, 'recorded');
  const [file] = readdirSync(recorded).filter((name) => name.endsWith('.har'));
  const har = readFileSync(join(recorded, file ?? ''), 'utf8');
  // Every exchange the proxy checked is in the recording, and only those.
  expect((JSON.parse(har) as { log: { entries: unknown[] } }).log.entries).toHaveLength(Number(checked?.[1]));
  // The demo key, and the client's prompts: redacted, as nothing said --keep-content.
  for (const secret of ['sk-emulator-demo', 'paper clip', 'haiku about rain', 'Say hello']) expect(har).not.toContain(secret);
  expect(readdirSync(join(work, 'scenarios')).sort()).toEqual(['recorded-tasks.yaml', 'recorded-text.yaml']);
}, 300_000);
