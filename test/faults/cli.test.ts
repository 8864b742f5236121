import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { runCommand } from '../support/command.ts';
import { admin, DEMO_KEY, killAll, startCli } from '../support/cli.ts';

// `svc-emulator start --faults FILE` in a real process: the file's rules are in force from the first request, and
// a file that is not a rule set stops the start with one line and exit 2 (both processes run side by side).

afterEach(killAll);

it('starts with the rules of --faults in force, and refuses a bad fault file with one line and exit 2', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-faults-cli-'));
  const good = join(dir, 'faults.yaml');
  writeFileSync(good, 'seed: ci\nrules:\n  - match: { path: /v1/models }\n    fault: { kind: error, code: rate_limited, retry_after: 2 }\n    times: 1\n');
  const bad = join(dir, 'bad.yaml');
  writeFileSync(bad, 'rules:\n  - fault: { kind: trickle }\n');

  const [cli, refused] = await Promise.all([startCli(['--memory', '--clock', 'manual', '--faults', good, '--log-level', 'info']), runCommand(['start', '--memory', '--port', '0', '--faults', bad], 30_000)]);

  expect(refused.code).toBe(2);
  expect(refused.stderr.trim().split('\n')).toEqual([`svc-emulator: the fault file ${bad} is not a rule set: rules[0].fault.bytes_per_second: is required`]);
  expect(refused.stdout).not.toContain('listening');

  expect(cli.output()).toContain(`faults       1 rule(s) from ${good}`);
  const limited = await fetch(`${cli.base}/v1/models`, { headers: { Authorization: `Bearer ${DEMO_KEY}` } });
  expect([limited.status, limited.headers.get('retry-after')]).toEqual([429, '2']);
  expect((await fetch(`${cli.base}/v1/models`, { headers: { Authorization: `Bearer ${DEMO_KEY}` } })).status).toBe(200);
  const listed = (await (await admin(cli, 'GET', '/_emulator/faults')).json()) as { data: unknown[] };
  expect(listed.data).toMatchObject([{ id: 'fault_1', matched: 1, hits: 1, fault: { kind: 'error', code: 'rate_limited' } }]);
}, 60_000);
