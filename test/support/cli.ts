import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import type { ClientRequest, IncomingMessage } from 'node:http';

// The real `svc-emulator start` in a child process, for the tests of what only a process has: signals, exit
// codes and the listening server's limits. Nothing here sleeps: every wait is for an event of the child or a socket.

const BIN = new URL('../../bin/svc-emulator.js', import.meta.url).pathname;
export const ADMIN = 'cli-admin';
export const DEMO_KEY = 'sk-emulator-demo';

export interface CliEmulator {
  child: ChildProcess;
  base: string;
  port: number;
  /** Everything printed so far on standard output and standard error. */
  output(): string;
  /** Resolves once `pattern` has been printed (on either stream). */
  printed(pattern: RegExp): Promise<void>;
  /** Resolves with the exit code (128 + n for a signal that killed it). */
  exited: Promise<number>;
}

const running: ChildProcess[] = [];

/** Kills what a test left running (afterEach). */
export function killAll(): void {
  for (const child of running.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

/** Starts `svc-emulator start --port 0 --admin-token cli-admin ...args` and resolves once it listens. */
export async function startCli(args: string[]): Promise<CliEmulator> {
  const child = spawn(process.execPath, [BIN, 'start', '--port', '0', '--admin-token', ADMIN, '--log-level', 'warn', ...args], { stdio: 'pipe' });
  running.push(child);
  let text = '';
  const watchers = new Set<() => void>();
  const onData = (chunk: Buffer): void => {
    text += chunk.toString();
    for (const watch of [...watchers]) watch();
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const exited = new Promise<number>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? 128 + (signal === 'SIGKILL' ? 9 : signal === 'SIGTERM' ? 15 : 2))),
  );
  const printed = (pattern: RegExp): Promise<void> =>
    new Promise((resolve, reject) => {
      const watch = (): void => {
        if (!pattern.test(text)) return;
        watchers.delete(watch);
        resolve();
      };
      watchers.add(watch);
      watch();
      void exited.then((code) => {
        if (watchers.delete(watch)) reject(new Error(`exited ${code} before printing ${pattern}:\n${text}`));
      });
    });
  await printed(/admin token/);
  const base = /listening on (http:\/\/\S+)/.exec(text)?.[1] ?? '';
  return { child, base, port: Number(new URL(base).port), output: () => text, printed, exited };
}

/** A control API call. */
export async function admin(cli: CliEmulator, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${cli.base}${path}`, {
    method,
    headers: { Authorization: `Bearer ${ADMIN}`, Connection: 'close', ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

/**
 * A POST whose body the test sends when it likes. Resolves once the server has the request in hand: it asks for
 * `100 Continue`, which node answers only after parsing the headers and handing the request to the app.
 */
export function heldPost(
  cli: CliEmulator,
  path: string,
  headers: Record<string, string>,
  bodyLength: number,
): Promise<{ req: ClientRequest; answer: Promise<{ res: IncomingMessage; body: string }> }> {
  return new Promise((resolve, reject) => {
    const req = request(`${cli.base}${path}`, {
      method: 'POST',
      headers: { ...headers, 'Content-Length': String(bodyLength), Expect: '100-continue' },
    });
    const answer = new Promise<{ res: IncomingMessage; body: string }>((done, fail) => {
      req.once('response', (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.once('end', () => done({ res, body }));
        res.once('error', fail);
      });
      req.once('error', fail);
    });
    // Keeps an expected failure from being reported as unhandled before the test awaits it.
    answer.catch(() => undefined);
    req.once('continue', () => resolve({ req, answer }));
    req.once('error', reject);
    req.flushHeaders();
  });
}

/** Resolves with the error code of a connection attempt that fails, or 'connected'. */
export async function tryConnect(cli: CliEmulator): Promise<string> {
  try {
    const res = await fetch(`${cli.base}/_emulator/health`, { headers: { Connection: 'close' } });
    await res.arrayBuffer();
    return 'connected';
  } catch (err) {
    return String((err as { cause?: { code?: string } }).cause?.code ?? err);
  }
}

/** Rejects when `promise` takes longer than `ms`: a limit not applied, or a wait not cut short, fails instead of hanging. */
export const within = <T>(ms: number, promise: Promise<T>, what: string): Promise<T> =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} took over ${ms} ms`)), ms);
    promise.then(
      (value) => (clearTimeout(timer), resolve(value)),
      (err: unknown) => (clearTimeout(timer), reject(err as Error)),
    );
  });
