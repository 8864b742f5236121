import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, expect, it } from 'vitest';
import { UsageError } from '../../src/cli/args.ts';
import { parseReceiverCheckOptions } from '../../src/cli/receiver-check.ts';
import { RECEIVER_RULES } from '../../src/verdict/index.ts';
import { busier } from '../support/busy.ts';
import { cliBin, CHECKOUT_BIN } from '../support/cli-build.ts';
import { runCommand } from '../support/command.ts';
import { startTestReceiver } from './receivers.ts';
import type { TestReceiver } from './receivers.ts';

// `svc-emulator receiver-check`, the command, in a child process: against `svc-emulator receive` (the project's
// reference receiver) it passes every check, writes JUnit and JSON and shows no secret anywhere; it stops with one
// line and exit 2 at a receiver it cannot reach, follows no redirect, sends nothing on --dry-run, and exits 1 when
// a check fails. The receivers other than `receive` run in this process.

const SECRET = 'whsec_Y2xpIHRlc3Qgb2YgcmVjZWl2ZXItY2hlY2s=';
const ROTATED = 'whsec_cm90YXRlZCBjbGkgdGVzdCBzZWNyZXQ=';
const KEY_PART = SECRET.slice('whsec_'.length);
const ROOT = new URL('../../', import.meta.url).pathname;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function scratch(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-receiver-check-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function receiver(name: Parameters<typeof startTestReceiver>[1]): Promise<TestReceiver> {
  const started = await startTestReceiver(SECRET, name);
  cleanups.push(() => started.close());
  return started;
}

/** A local server answering every request with `answer`; `hits` counts them. */
async function server(answer: Parameters<typeof createServer>[1]): Promise<{ url: string; hits: () => number }> {
  let hits = 0;
  const s: Server = createServer((req, res) => {
    hits += 1;
    req.resume();
    req.on('end', () => answer?.(req, res));
  });
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => (s.closeAllConnections(), s.close(() => resolve()))));
  return { url: `http://127.0.0.1:${(s.address() as AddressInfo).port}/hooks`, hits: () => hits };
}

/** `svc-emulator receive --port 0`, started as a user starts it; resolves with its address. */
async function referenceReceiver(): Promise<string> {
  const child: ChildProcess = spawn(process.execPath, [cliBin(), 'receive', '--port', '0', '--secret', SECRET], { stdio: 'pipe' });
  cleanups.push(() => void child.kill('SIGKILL'));
  let out = '';
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match?.[1]) resolve(match[1]);
    });
    child.once('exit', (code) => reject(new Error(`receive exited ${code}: ${out}`)));
  });
}

const secretsIn = (text: string): string[] => [SECRET, KEY_PART, ROTATED, ROTATED.slice(6)].filter((s) => text.includes(s));
const run = (args: string[]) => runCommand(['receiver-check', ...args], 60_000);

it('passes every check against svc-emulator receive, writes JUnit and JSON, and shows no secret anywhere', async () => {
  const [url, dir] = await Promise.all([referenceReceiver(), scratch()]);
  const junit = join(dir, 'out/receiver-check.xml');
  const json = join(dir, 'out/receiver-check.json');
  const result = await run(['--url', `${url}hooks`, '--secret', SECRET, '--rotated-secret', ROTATED, '--junit', junit, '--json', json]);
  expect(result.code, result.stdout + result.stderr).toBe(0);
  const lines = result.stdout.trim().split('\n');
  expect(lines[0]).toBe(`receiver-check: sending 27 deliveries to ${url}hooks for 14 checks (10000 ms to answer each)`);
  expect(lines.slice(1)).toEqual([
    ...RECEIVER_RULES.filter((r) => r.id !== 'receiver.acts-once').map((r) => `pass ${r.id}`),
    'n/a  receiver.acts-once: no effects hook was given (receiver-check --effects-url)',
    'receiver-check: 13 passed, 0 failed, 1 not exercised',
  ]);
  const [xml, report] = await Promise.all([readFile(junit, 'utf8'), readFile(json, 'utf8')]);
  expect(xml).toContain('<testsuites name="svc-emulator receiver-check" tests="14" failures="0" errors="0" skipped="1"');
  expect(xml).toContain('<testcase classname="receiver-check.receiver" name="receiver.rejects-foreign-secret"/>');
  expect(JSON.parse(report)).toMatchObject({ ok: true, sent: 27, timeout_ms: 10_000, counts: { pass: 13, fail: 0, not_exercised: 1 } });
  expect(secretsIn(result.stdout + result.stderr + xml + report)).toEqual([]);
});

it('stops with one line and exit 2 at a receiver it cannot reach, and writes no report', async () => {
  // A port that was free a moment ago: nothing listens there.
  const probe = createNetServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(probe.address() as AddressInfo).port}/hooks`;
  await new Promise((resolve) => probe.close(resolve));
  const dir = await scratch();
  const result = await run(['--url', url, '--secret', SECRET, '--junit', join(dir, 'r.xml')]);
  expect(result.code).toBe(2);
  expect(result.stderr.trim().split('\n')).toEqual([`svc-emulator receiver-check: cannot reach ${url} (connection refused); nothing was judged`]);
  expect(existsSync(join(dir, 'r.xml'))).toBe(false);
});

it('follows no redirect: a 307 is the answer, and the address it points to gets nothing', async () => {
  const elsewhere = await server((_req, res) => void res.writeHead(200).end('ok'));
  const redirecting = await server((_req, res) => void res.writeHead(307, { Location: elsewhere.url }).end());
  const result = await run(['--url', redirecting.url, '--secret', SECRET, '--only', 'receiver.acknowledges']);
  expect(result.code, result.stderr).toBe(1);
  expect(result.stdout).toMatch(/^FAIL receiver\.acknowledges: the receiver answered 307 to callback msg_\w+ \(webhook\.test\) \(and 5 more\)$/m);
  expect(result.stdout).toMatch(/^ {7}msg_\w+ answered 307 in \d+ ms: task\.succeeded of avatar-photo$/m);
  expect([redirecting.hits(), elsewhere.hits()]).toEqual([6, 0]);
});

it('--dry-run prints what it would send and sends nothing', async () => {
  const target = await server((_req, res) => void res.writeHead(200).end());
  const result = await run(['--url', target.url, '--secret', SECRET, '--rotated-secret', ROTATED, '--only', 'receiver.acknowledges-rotation,receiver.rejects-missing-header', '--dry-run']);
  expect(result.code, result.stderr).toBe(0);
  expect(result.stdout).toContain(`receiver-check --dry-run: would send 5 deliveries to ${target.url} for 3 checks; nothing is sent`);
  expect(result.stdout).toMatch(/^#1 POST \S+ webhook-id msg_\w+ \(receiver\.acknowledges-rotation\)$/m);
  expect(result.stdout).toContain("webhook-signature: v1 by --rotated-secret, v1 by --secret");
  expect(result.stdout).toContain('    no webhook-signature header');
  expect(result.stdout).toContain('webhook-signature: none');
  expect(target.hits()).toBe(0);
  expect(secretsIn(result.stdout + result.stderr)).toEqual([]);
});

it('judges the time with --timeout-ms, reads an --effects-url, and hides a secret the receiver echoes', async () => {
  const slow = await receiver('answers-after-12-s');
  const careful = await receiver('careful');
  const echo = await server((_req, res) => void res.writeHead(401).end(`no signature by ${SECRET} here (key ${KEY_PART})`));
  const dir = await scratch();
  const json = join(dir, 'echo.json');
  const [late, effects, echoed] = await Promise.all([
    run(['--url', slow.url, '--secret', SECRET, '--only', 'receiver.acknowledges', '--timeout-ms', String(300 * busier)]),
    run(['--url', careful.url, '--secret', SECRET, '--only', 'receiver.acts-once', '--effects-url', `${careful.effectsUrl}?task_id={task_id}`]),
    run(['--url', echo.url, '--secret', SECRET, '--only', 'receiver.rejects-forged-signature', '--json', json]),
  ]);
  expect(late.code, late.stderr).toBe(1);
  expect(late.stdout).toMatch(/^FAIL receiver\.acknowledges: the receiver did not answer in time to callback msg_\w+ \(webhook\.test\) \(and 5 more\)$/m);
  expect(late.stdout).toMatch(/^ {7}msg_\w+ no answer within the timeout: task\.failed of social-notes-data$/m);
  expect(effects.code, effects.stdout + effects.stderr).toBe(0);
  expect(effects.stdout).toContain('pass receiver.acknowledges\npass receiver.acts-once\nreceiver-check: 2 passed, 0 failed, 0 not exercised');
  // The echoing receiver refuses even the valid message before the forged replay: receiver.acknowledges fails.
  expect(echoed.code).toBe(1);
  const written = await readFile(json, 'utf8');
  expect(written).toContain('"answer": "no signature by whsec_[redacted] here (key [redacted])"');
  expect(secretsIn(echoed.stdout + echoed.stderr + written)).toEqual([]);
});

it('refuses a command line it cannot use, naming the flag and never the secret', () => {
  const parse = (args: string[], env: NodeJS.ProcessEnv = {}) => () => parseReceiverCheckOptions(args, env);
  expect(parse(['--secret', SECRET])).toThrow(UsageError);
  expect(parse(['--secret', SECRET])).toThrow(/^svc-emulator receiver-check: --url URL is required/);
  expect(parse(['--url', 'http://127.0.0.1:4020/'])).toThrow(/--secret whsec_\.\.\. is required/);
  expect(parse(['--url', 'http://127.0.0.1:4020/'], { SVC_EMULATOR_WEBHOOK_SECRET: 'sk-not-a-webhook-secret' })).toThrow(
    'svc-emulator receiver-check: SVC_EMULATOR_WEBHOOK_SECRET: must start with whsec_ (the account\'s signing secret)',
  );
  expect(parse(['--url', 'ftp://host/hooks', '--secret', SECRET])).toThrow('svc-emulator receiver-check: --url: must start with http:// or https:// (got ftp:)');
  expect(parse(['--url', 'http://h/', '--secret', SECRET, '--rotated-secret', SECRET])).toThrow('--rotated-secret: is the same as the secret');
  expect(parse(['--url', 'http://h/', '--secret', SECRET, '--timeout-ms', 'soon'])).toThrow('--timeout-ms must be a whole number of milliseconds (got soon)');
  expect(parse(['--url', 'http://h/', '--secret', SECRET, '--only', 'receiver.nope'])).toThrow(/--only: receiver\.nope names no check \(the checks: receiver\.acknowledges, /);
  expect(parse(['--url', 'http://h/', '--secret', SECRET, '--only', 'receiver.rejects-*'])().check.only).toEqual(['receiver.rejects-*']);
  expect(parse(['--url', 'http://h/', '--secret', `${SECRET}!`])).toThrow('svc-emulator receiver-check: --secret: must be whsec_ followed by Base64');
});

it('runs where the store’s native binding cannot load', async () => {
  const careful = await receiver('careful');
  const dir = await scratch();
  const hooks = join(dir, 'hooks.mjs');
  await writeFile(hooks, "export async function resolve(s, c, next) { if (s === 'libsql' || s.startsWith('@libsql/')) throw new Error(`${s}: blocked by the test`); return next(s, c); }\n");
  const preload = join(dir, 'preload.mjs');
  // The ESM hook for imports, and Module._resolveFilename for a require of the same names (test/cli/kit-without-binding.test.ts's).
  await writeFile(
    preload,
    [
      "import Module, { register } from 'node:module';",
      `register(${JSON.stringify(pathToFileURL(hooks).href)});`,
      'const resolveFilename = Module._resolveFilename;',
      'Module._resolveFilename = function (request, ...rest) {',
      "  if (request === 'libsql' || request.startsWith('@libsql/')) throw Object.assign(new Error(request + ': blocked by the test'), { code: 'MODULE_NOT_FOUND' });",
      '  return resolveFilename.call(this, request, ...rest);',
      '};',
      '',
    ].join('\n'),
  );
  const withoutBinding = async (args: string[]): Promise<{ code: number | null; output: string }> => {
    const child = spawn(process.execPath, ['--import', pathToFileURL(preload).href, CHECKOUT_BIN, ...args], { cwd: ROOT, stdio: 'pipe' });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    return { code: await new Promise<number | null>((resolve) => child.once('close', resolve)), output };
  };
  const [checked, store] = await Promise.all([
    withoutBinding(['receiver-check', '--url', careful.url, '--secret', SECRET, '--only', 'receiver.rejects-forged-signature']),
    // The hook holds: a command that opens the store cannot load.
    withoutBinding(['store', 'check', '--db', join(dir, 'none.db')]),
  ]);
  expect(store.output).toContain('blocked by the test');
  expect(checked.output).not.toContain('blocked by the test');
  expect(checked.code, checked.output).toBe(0);
  expect(checked.output).toContain('pass receiver.rejects-forged-signature');
}, 60_000 * busier);
