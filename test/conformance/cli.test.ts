import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Big from 'big.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/cli/args.ts';
import { parseConformanceOptions } from '../../src/cli/conformance.ts';
import { ALL_CHECKS, BEHAVIOUR_CHECKS, ConformanceSetupError, COVERAGE, runConformance } from '../../src/conformance/index.ts';
import type { SuiteReport } from '../../src/conformance/index.ts';
import { createEmulator } from '../../src/index.ts';
import type { Emulator } from '../../src/index.ts';
import { runCommand } from '../support/command.ts';
import { closedPort } from '../support/ports.ts';
import type { CommandRun } from '../support/command.ts';
import { startBlackHole } from '../support/receiver.ts';
import { conformanceInProcess } from '../support/shared-in-process.ts';

// `svc-emulator conformance` as a newcomer runs it: the real CLI spawned against an emulator that listens, its
// exit code and every line it prints.

const ADMIN = 'cli-conformance-admin';
const DEMO_KEY = 'sk-emulator-demo';

type Run = CommandRun;

/** How many rules of the coverage table are reachable through the public API, and how many there are in all. */
const PUBLIC = COVERAGE.filter((row) => !row.control).length;
const ALL = COVERAGE.length;
/** The line a run prints before its summary: `public` rules reachable through the public API exercised, `all` in all. */
const coverageLine = (open: [number, number], all: [number, number]): string =>
  `coverage: ${open[0]} of ${PUBLIC} rules reachable through the public API exercised (${open[1]} passed); ${all[0]} of ${ALL} with the control API (${all[1]} passed)`;

const conformance = (args: string[]): Promise<Run> => runCommand(['conformance', ...args], 150_000);

/** A usage or setup error: exit 2, one line on standard error, nothing on standard output. */
function expectOneLine(run: Run, line: string | RegExp): void {
  expect(run.code, run.stdout + run.stderr).toBe(2);
  expect(run.stdout).toBe('');
  const lines = run.stderr.split('\n');
  expect(lines, run.stderr).toHaveLength(2);
  expect(lines[1]).toBe('');
  if (typeof line === 'string') expect(lines[0]).toBe(line);
  else expect(lines[0]).toMatch(line);
}

/** The line the command prints when the suite cannot start (src/cli/conformance.ts), from the suite run in this process. */
async function setupError(args: string[]): Promise<string> {
  try {
    await runConformance(parseConformanceOptions(args));
  } catch (err) {
    expect(err).toBeInstanceOf(ConformanceSetupError);
    return `svc-emulator conformance: ${(err as Error).message}`;
  }
  throw new Error('the suite ran');
}

let lenient: Emulator;
let strict: Emulator;
let lenientUrl: string;
let strictUrl: string;
let dir: string;

beforeAll(async () => {
  // As the README starts it for the suite (callbacks to the suite's http receiver accepted) ...
  lenient = await createEmulator({ clock: 'manual', adminToken: ADMIN, allowInsecureWebhooks: true, log: () => undefined });
  lenientUrl = await lenient.listen(0);
  // ... and as a newcomer might: http callback addresses refused, as the real service refuses them.
  strict = await createEmulator({ clock: 'manual', adminToken: ADMIN, log: () => undefined });
  strictUrl = await strict.listen(0);
  dir = await mkdtemp(join(tmpdir(), 'svc-conformance-cli-'));
});

afterAll(async () => {
  await lenient.close();
  await strict.close();
  await rm(dir, { recursive: true, force: true });
});

async function account(base: string, id: string): Promise<{ available: string; frozen: string; charged: string }> {
  const res = await fetch(`${base}/_emulator/accounts/${id}`, { headers: { Authorization: `Bearer ${ADMIN}` } });
  expect(res.status).toBe(200);
  return (await res.json()) as { available: string; frozen: string; charged: string };
}

describe('with the control API, the suite funds its own account', () => {
  // One run of the whole suite through the CLI serves both: the command's exit 0 with JUnit and JSON against the
  // plain emulator (the control of deviations.test.ts's 'exits 1 against a deviating server'), and the account.
  it('runs every check without --budget and skips none, spending nothing of the given key; exits 0 against the plain emulator, JUnit and JSON saying so, with the full coverage', async () => {
    const json = join(dir, 'self-funded.json');
    const junit = join(dir, 'self-funded.xml');
    const run = await conformance(['--base-url', lenientUrl, '--api-key', DEMO_KEY, '--admin-url', lenientUrl, '--admin-token', ADMIN, '--fail-on-skip', '--json', json, '--junit', junit]);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stderr).toBe('');
    expect(run.stdout).not.toMatch(/^FAIL /m);
    const xml = await readFile(junit, 'utf8');
    expect(xml).not.toContain('<failure');
    expect(xml.match(/<testcase /g)).toHaveLength(ALL_CHECKS.length + BEHAVIOUR_CHECKS.length);
    for (const [scope, rules] of [['public', PUBLIC], ['all', ALL]] as const) {
      for (const count of ['rules', 'exercised', 'passed']) expect(xml).toContain(`<property name="coverage.${scope}.${count}" value="${rules}"/>`);
    }
    const lines = run.stdout.trimEnd().split('\n');

    const first = /^running as (acct_[a-z0-9]+), a fresh account the control API funded with 100000\.000 points: no budget applies \(--api-key is for real deployments and not used here\)$/.exec(lines[0] ?? '');
    expect(first, lines[0]).not.toBeNull();
    expect(lines.filter((l) => l.startsWith('skip '))).toEqual([]);
    const every = [...ALL_CHECKS, ...BEHAVIOUR_CHECKS];
    for (const check of every) expect(lines).toContain(`ok   ${check.id}`);
    expect(lines.slice(-2)).toEqual([coverageLine([PUBLIC, PUBLIC], [ALL, ALL]), `${every.length} passed, 0 failed, 0 skipped`]);
    expect(run.stdout).not.toContain('--fail-on-skip:');

    const report = JSON.parse(await readFile(json, 'utf8')) as SuiteReport;
    expect([report.passed, report.failed, report.skipped]).toEqual([ALL_CHECKS.length + BEHAVIOUR_CHECKS.length, 0, 0]);
    expect(report.coverage).toEqual({ public: { rules: PUBLIC, exercised: PUBLIC, passed: PUBLIC }, all: { rules: ALL, exercised: ALL, passed: ALL } });
    expect(report.budget).toBeNull();
    expect(report.account).toEqual({ id: first?.[1], points: '100000.000' });

    // The suite's tasks settled on its own account; the demo key's account is as it was seeded.
    expect(new Big((await account(lenientUrl, first?.[1] ?? '')).charged).gt(0)).toBe(true);
    expect(await account(lenientUrl, 'acct_demo')).toMatchObject({ available: '100000.000', frozen: '0.000', charged: '0.000' });
  }, 180_000);
});

describe('--fail-on-skip', () => {
  it('exits 1 when a check was skipped, listing it; without the flag the same run exits 0', async () => {
    const args = ['--base-url', strictUrl, '--admin-url', strictUrl, '--admin-token', ADMIN, '--only', 'callbacks.terminal.signed-once'];
    // The failing run through the process; beside it, the same command's own code in this process (what it prints
    // and the exit code it hands to process.exit): the run without the flag, then one on a budget.
    const [plain, failing] = await Promise.all([conformanceInProcess(args), conformance([...args, '--fail-on-skip'])]);
    // Without the control API, the default budget of real points skips the dearest checks.
    const budget = await conformanceInProcess(['--base-url', strictUrl, '--api-key', DEMO_KEY, '--only', 'billing.freeze.*', '--fail-on-skip']);
    const reason = /^skip callbacks\.terminal\.signed-once \(the deployment refuses the receiver's address http:\/\/127\.0\.0\.1:\d+\/ \(callback addresses must be https and not internal, as the reference says\); give a public https --webhook-url, or start the emulator with --allow-insecure-webhooks\)$/m;

    expect(plain.code, plain.stdout + plain.stderr).toBe(0);
    expect(plain.stdout).toMatch(reason);
    // A skipped check exercised nothing: the score says so before the summary.
    expect(plain.stdout.trimEnd().split('\n').slice(-2)).toEqual([coverageLine([0, 0], [0, 0]), '0 passed, 0 failed, 1 skipped']);

    expect(failing.code, failing.stdout + failing.stderr).toBe(1);
    expect(failing.stdout).toMatch(reason);
    const lines = failing.stdout.trimEnd().split('\n');
    expect(lines.slice(-3)).toEqual([coverageLine([0, 0], [0, 0]), '--fail-on-skip: 1 skipped, so this run fails: callbacks.terminal.signed-once', '0 passed, 0 failed, 1 skipped']);

    expect(budget.code, budget.stdout + budget.stderr).toBe(1);
    const budgetLines = budget.stdout.trimEnd().split('\n');
    expect(budgetLines[0]).toBe('running as the given key; budget 200 points');
    expect(budgetLines).toContain('skip billing.freeze.video-720p-5s (would spend up to 1188 points; 200 left of the budget of 200 (--budget))');
    expect(budgetLines.slice(-3)).toEqual([
      coverageLine([5, 5], [5, 5]),
      '--fail-on-skip: 4 skipped, so this run fails: billing.freeze.video-720p-5s, billing.freeze.video-480p-4s, billing.freeze.video-1080p-5s, billing.freeze.avatar-max',
      // The three that ran (notes, avatar standard and fast), and the two rules of behaviour about the freeze
      // (billing.freeze.*) over what they saw.
      '5 passed, 0 failed, 4 skipped',
    ]);
  }, 180_000);
});

describe('an address that does not answer, or refuses the suite, is one line and exit 2', () => {
  it('says why it cannot reach the deployment, from the error: refused, DNS, TLS, timeout', async () => {
    const port = await closedPort();
    const hole = await startBlackHole();
    const silent = new URL(hole.url).origin;
    const https = lenientUrl.replace(/^http:/, 'https:');
    try {
      // One through the command (one line, exit 2); the rest are the suite's setup errors, which it prints so.
      const [refused, refusedAdmin, dns, tls, timeout] = await Promise.all([
        conformance(['--base-url', `http://127.0.0.1:${port}`, '--api-key', DEMO_KEY]),
        setupError(['--base-url', `http://127.0.0.1:${port}`, '--admin-url', `http://127.0.0.1:${port}`, '--admin-token', ADMIN]),
        setupError(['--base-url', 'http://svc-conformance.invalid', '--api-key', DEMO_KEY]),
        setupError(['--base-url', https, '--api-key', DEMO_KEY]),
        setupError(['--base-url', silent, '--api-key', DEMO_KEY, '--request-timeout', '300']),
      ]);
      expectOneLine(refused, `svc-emulator conformance: cannot reach http://127.0.0.1:${port} (connection refused)`);
      expect(refusedAdmin).toBe(`svc-emulator conformance: cannot reach http://127.0.0.1:${port} (connection refused)`);
      expect(dns).toMatch(/^svc-emulator conformance: cannot reach http:\/\/svc-conformance\.invalid \(DNS lookup failed: (no such host|the name server did not answer)\)$/);
      expect(tls).toMatch(new RegExp(`^svc-emulator conformance: cannot reach ${https.replaceAll('.', '\\.')} \\(TLS error: [A-Z_]+\\)$`));
      expect(timeout).toBe(`svc-emulator conformance: cannot reach ${silent} (no answer within 300 ms)`);
      expect(hole.connections()).toBeGreaterThan(0);
    } finally {
      await hole.close();
    }
  }, 180_000);

  it('says which credential was refused: the API key or the admin token', async () => {
    const [key, token] = await Promise.all([
      setupError(['--base-url', lenientUrl, '--api-key', 'sk-not-a-key-of-this-emulator']),
      setupError(['--base-url', lenientUrl, '--admin-url', lenientUrl, '--admin-token', 'not-the-token']),
    ]);
    expect(key).toBe(`svc-emulator conformance: ${lenientUrl} refused the API key (GET /v1/tasks answered 401 invalid_api_key)`);
    expect(token).toBe(`svc-emulator conformance: the control API at ${lenientUrl} refused the admin token (401)`);
  }, 180_000);
});

describe('usage errors name the flag and the value', () => {
  it('says what an address needs, suggests the flag meant, and refuses bad values', async () => {
    const cases: [string[], string][] = [
      [['--base-url', '127.0.0.1:4161', '--api-key', DEMO_KEY], '--base-url must start with http:// or https:// (got 127.0.0.1:4161; did you mean http://127.0.0.1:4161?)'],
      [['--base-url', 'api.example.com', '--api-key', DEMO_KEY], '--base-url must start with http:// or https:// (got api.example.com; did you mean https://api.example.com?)'],
      [['--base-url', lenientUrl, '--admin-url', 'localhost:4010', '--admin-token', ADMIN], '--admin-url must start with http:// or https:// (got localhost:4010; did you mean http://localhost:4010?)'],
      [['--base-url', `${lenientUrl}/v1`, '--api-key', DEMO_KEY], `--base-url takes the scheme and host only, no path (got ${lenientUrl}/v1; did you mean ${lenientUrl}?)`],
      [['--base-url', lenientUrl, '--api-key', DEMO_KEY, '--budgte', '5'], 'unknown option --budgte; did you mean --budget? (svc-emulator conformance --help lists them)'],
      [['--base-url', lenientUrl, '--api-key', DEMO_KEY, '--budget', 'lots'], '--budget must be a number of points, like 2000 or 2000.5 (got lots)'],
      [['--base-url', lenientUrl, '--api-key', DEMO_KEY, '--webhook-listen', '70000'], '--webhook-listen must be a port number, 0-65535 (got 70000)'],
      [['--base-url', lenientUrl, '--api-key', DEMO_KEY, '--request-timeout', '1.5'], '--request-timeout must be a whole number of milliseconds (got 1.5)'],
      [['--base-url', lenientUrl], '--api-key is required, unless --admin-url and --admin-token are given (against the emulator the suite then makes its own account)'],
      [['--base-url', lenientUrl, '--admin-url', lenientUrl], '--admin-url needs --admin-token (the token the emulator was started with)'],
    ];
    // The parser's errors, as the command prints them (its message, one line, exit 2: src/cli/main.ts) ...
    const thrown = cases.map(([args]) => {
      try {
        parseConformanceOptions(args);
        return 'parsed';
      } catch (err) {
        return err instanceof UsageError ? err.message : String(err);
      }
    });
    expect(thrown).toEqual(cases.map(([, line]) => `svc-emulator conformance: ${line}`));
    // ... and one through the command itself.
    expectOneLine(await conformance(cases[0]?.[0] ?? []), `svc-emulator conformance: ${cases[0]?.[1] ?? ''}`);
  }, 180_000);
});
