import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect } from 'vitest';
import type { TestAccount } from './acknowledged.ts';
import { ADMIN, startCli } from '../support/cli.ts';
import type { CliEmulator } from '../support/cli.ts';
import { killAll } from '../support/cli.ts';
import { startReceiver } from '../support/receiver.ts';
import type { Receiver } from '../support/receiver.ts';
import { sendJson } from '../support/json-client.ts';
import type { Reply } from '../support/json-client.ts';

// The real `svc-emulator start` on a file store, as a process that is killed with SIGKILL and started again on the
// same files, and a small HTTP client for it whose failures (the process died under it) are told apart from
// answers.

export { ADMIN, DEMO_KEY, killAll } from '../support/cli.ts';
export type { CliEmulator } from '../support/cli.ts';

const started: CliEmulator[] = [];

/** Starts the CLI on `db`: manual clock, plain-HTTP callbacks to the test's receiver, quiet logs. */
export async function startOn(db: string, extra: string[] = []): Promise<CliEmulator> {
  const cli = await startCli(['--db', db, '--clock', 'manual', '--allow-insecure-webhooks', '--webhook-timeout-ms', '5000', ...extra]);
  started.push(cli);
  return cli;
}

/** What every process started so far printed (warnings and errors: the log level is warn), oldest first. */
export const printed = (): string[] => started.map((cli) => cli.output());

/** kill -9, and wait until the process is gone. */
export async function kill9(cli: CliEmulator): Promise<void> {
  cli.child.kill('SIGKILL');
  expect(await cli.exited).toBe(137);
}

export type { Reply };

export interface Client {
  /** Rejects when no whole answer came (the process was killed): only a resolved answer was acknowledged. */
  send(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Reply>;
  get(path: string): Promise<Reply>;
  post(path: string, body?: unknown, headers?: Record<string, string>): Promise<Reply>;
}

export function clientOf(base: string, token: string): Client {
  // A rejection, not a reply, when the kill cut the answer: an answer cut by the kill is not an answer.
  const send: Client['send'] = (method, path, body, headers) => sendJson(base, token, method, path, body, headers);
  return { send, get: (path) => send('GET', path), post: (path, body, headers) => send('POST', path, body, headers) };
}

export const adminOf = (cli: CliEmulator): Client => clientOf(cli.base, ADMIN);

/** The body of an answer with the `expected` status, or a failure naming what came instead. */
export function expectStatus<T>(reply: Reply, expected: number, what: string): T {
  expect(reply.status, `${what}: ${JSON.stringify(reply.body)}`).toBe(expected);
  return reply.body as T;
}

/** Polls `probe` every 20 ms until it returns true, for at most `timeoutMs`; returns whether it did. */
export async function eventually(probe: () => Promise<boolean>, timeoutMs = 10_000): Promise<boolean> {
  const until = performance.now() + timeoutMs;
  for (;;) {
    if (await probe()) return true;
    if (performance.now() > until) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** `count` accounts of 5,000,000 points, each with a key and its callbacks sent to `webhookUrl`. */
export async function openAccounts(cli: CliEmulator, count: number, webhookUrl: string): Promise<TestAccount[]> {
  const admin = adminOf(cli);
  const accounts: TestAccount[] = [];
  for (let i = 0; i < count; i += 1) {
    const opening = '5000000.000';
    const account = expectStatus<{ id: string; webhook_secret: string }>(
      await admin.post('/_emulator/accounts', { points: opening, webhook_url: webhookUrl }),
      201,
      'create account',
    );
    const key = expectStatus<{ key: string }>(await admin.post(`/_emulator/accounts/${account.id}/keys`, {}), 201, 'create key');
    accounts.push({ id: account.id, key: key.key, secret: account.webhook_secret, opening });
  }
  return accounts;
}

/** A test's store folder and callback receiver, made fresh before each test of the suite that asks for them. */
export interface CrashWorkspace {
  dir: string;
  db: string;
  receiver: Receiver;
}

/**
 * Registers the suite's beforeEach/afterEach: a fresh folder (`db` inside it) and receiver per test; after it,
 * every process is killed, and on a failure (or CRASH_KEEP=1) the store files are kept with what each process
 * printed, named in one line prefixed `label`.
 */
export function crashWorkspace(label: string): CrashWorkspace {
  const ws = {} as CrashWorkspace;
  beforeEach(async () => {
    ws.dir = await mkdtemp(join(tmpdir(), `svc-${label}-`));
    ws.db = join(ws.dir, 'store.db');
    ws.receiver = await startReceiver();
  });
  afterEach(async ({ task }) => {
    killAll();
    await ws.receiver.close();
    if (task.result?.state === 'fail' || process.env['CRASH_KEEP']) {
      await writeFile(join(ws.dir, 'processes.log'), printed().map((out, i) => `--- process ${i + 1}\n${out}`).join('\n'));
      console.error(`${label}: store files kept in ${ws.dir}`);
    } else {
      await rm(ws.dir, { recursive: true, force: true });
    }
  });
  return ws;
}
