import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { UsageError } from '../../src/cli/args.ts';
import { parseStartOptions } from '../../src/cli/start-options.ts';
import { CHECKOUT_BIN, cliBin } from '../support/cli-build.ts';

const running: ChildProcess[] = [];
afterEach(() => {
  for (const child of running.splice(0)) child.kill('SIGKILL');
});

/** `svc-emulator ARGS`: the checkout's command as the tests lay it out (test/support/cli-build.ts), or `bin`. */
function run(args: string[], env: Record<string, string> = {}, bin = cliBin()): ChildProcess {
  const child = spawn(process.execPath, [bin, ...args], { env: { ...process.env, ...env }, stdio: 'pipe' });
  running.push(child);
  return child;
}

/** Resolves with everything printed once `pattern` appears on stdout. */
function waitFor(child: ChildProcess, pattern: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (pattern.test(out)) resolve(out);
    });
    child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('exit', (code) => reject(new Error(`exited ${code} before ${pattern}: ${out}${err}`)));
  });
}

const exitOf = (child: ChildProcess): Promise<number | null> =>
  new Promise((resolve) => child.on('exit', (code) => resolve(code)));

it('starts, prints the address, demo account, demo key and admin token, serves, and stops on SIGTERM', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-cli-'));
  try {
    // The checkout's own bin/svc-emulator.js, through tsx, as `npm start` in a clone runs it.
    const child = run(['start', '--port', '0', '--db', join(dir, 'db.json'), '--clock', 'manual'], { SVC_EMULATOR_ADMIN_TOKEN: 'cli-admin' }, CHECKOUT_BIN);
    const out = await waitFor(child, /admin token/);
    const base = /listening on (http:\/\/[^\s]+)/.exec(out)?.[1];
    expect(base).toBeDefined();
    expect(out).toContain('acct_demo');
    expect(out).toContain('sk-emulator-demo');
    // A token the user chose is shown masked (it would otherwise sit in logs); the dashboard and the demo
    // account's callback secret are what a QA person needs next.
    expect(out).not.toContain('cli-admin');
    expect(out).toMatch(/admin token\s+cli-…in \(as given\)/);
    expect(out).toContain(`dashboard    ${base}/_emulator/ui`);
    expect(out).toMatch(/webhooks\s+signed with whsec_[A-Za-z0-9+/=]+/);
    const health = await fetch(`${base}/_emulator/health`);
    expect(health.status).toBe(200);
    const tasks = await fetch(`${base}/v1/tasks`, { headers: { Authorization: 'Bearer sk-emulator-demo' } });
    expect(tasks.status).toBe(200);
    expect(tasks.headers.get('x-request-id')).toMatch(/^req_[a-z0-9]{24}$/);
    const clock = await fetch(`${base}/_emulator/clock`, { headers: { Authorization: 'Bearer cli-admin' } });
    expect(((await clock.json()) as { mode: string }).mode).toBe('manual');
    child.kill('SIGTERM');
    expect(await exitOf(child)).toBe(0);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

it('says in one line that the port is in use, and exits 2', async () => {
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  const { port } = blocker.address() as AddressInfo;
  try {
    const child = run(['start', '--port', String(port), '--memory']);
    let err = '';
    child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
    expect(await exitOf(child)).toBe(2);
    expect(err.trim().split('\n')).toEqual([`svc-emulator: cannot listen on 127.0.0.1:${port}: the address is in use (another process listens there; choose another with --port)`]);
  } finally {
    blocker.close();
  }
});

it('prints a random admin token when none is given', async () => {
  const child = run(['start', '--port', '0', '--memory']);
  const out = await waitFor(child, /admin token/);
  expect(out).toMatch(/admin token\s+adm_[A-Za-z0-9]{32}/);
  expect(out).toMatch(/store\s+memory/);
});

// A usage error is one line and exit 2 (test/cli/options.test.ts runs those through the command): here, that start
// refuses each before it opens anything.
it.each([[['--clock', 'sundial']], [['--port', 'many']], [['--no-such-flag']], [['--memory', '--db', 'x.json']]])('refuses a usage error: %j', (args) => {
  expect(() => parseStartOptions(args, {})).toThrow(UsageError);
});

it('prints help and the version', async () => {
  const help = run(['--help']);
  const out = await waitFor(help, /--allow-insecure-webhooks/);
  expect(out).toContain('svc-emulator start');
  const version = run(['--version']);
  expect(await waitFor(version, /\d+\.\d+\.\d+/)).toMatch(/^\d+\.\d+\.\d+/);
});

it('stops at start-up with exit 2 and a message naming the file and the field for a bad scenario file', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-cli-scenarios-'));
  try {
    const { writeFile } = await import('node:fs/promises');
    await writeFile(join(dir, 'bad.yaml'), 'scenarios:\n  - name: default\n    outcome: sometimes\n');
    const child = run(['start', '--port', '0', '--memory', '--scenarios', dir]);
    let err = '';
    child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
    expect(await exitOf(child)).toBe(2);
    expect(err).toContain(join(dir, 'bad.yaml'));
    expect(err).toContain('scenarios[0].outcome');
    expect(err).not.toMatch(/\n\s+at /);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

it('at --log-level warn prints only the one listening line, and nothing as it shuts down', async () => {
  const child = run(['start', '--port', '0', '--memory', '--log-level', 'warn']);
  let out = '';
  let err = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
  await waitFor(child, /listening on/);
  const base = /listening on (http:\/\/\S+)/.exec(out)?.[1] ?? '';
  expect((await fetch(`${base}/_emulator/health`)).status).toBe(200);
  child.kill('SIGTERM');
  expect(await exitOf(child)).toBe(0);
  expect(out.trim().split('\n')).toEqual([expect.stringMatching(/^svc-emulator \S+ listening on http:\/\/127\.0\.0\.1:\d+$/)]);
  expect(err).toBe('');

});
