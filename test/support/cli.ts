import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import type { ClientRequest, IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { cliBin } from './cli-build.ts';

// The real `svc-emulator start` in a child process, for the tests of what only a process has: signals, exit
// codes and the listening server's limits. Nothing here sleeps: every wait is for an event of the child or a socket.
// The command is the checkout's, laid out as the installed package runs it (test/support/cli-build.ts).
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

/** Starts `svc-emulator start --port 0 --admin-token cli-admin ...args` (`env` added to its environment) and resolves once it listens. */
export async function startCli(args: string[], env: Record<string, string> = {}): Promise<CliEmulator> {
  const child = spawn(process.execPath, [cliBin(), 'start', '--port', '0', '--admin-token', ADMIN, '--log-level', 'warn', ...args], {
    stdio: 'pipe',
    env: { ...process.env, ...env },
  });
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
  await printed(/listening on /);
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

/** A request for the health of the emulator, for raw connections. */
export const HEALTH = 'GET /_emulator/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';

/** A raw connection: whether the server closed it, and its answers as they come. */
export interface RawConnection {
  socket: Socket;
  received(): string;
  isClosed(): boolean;
  closed: Promise<void>;
  /** Resolves with the next whole answer (headers and a Content-Length body) on this connection. */
  answer(): Promise<{ head: string; body: string }>;
  /** Sends one request (the health request by default) and resolves with the head of its answer. */
  ask(request?: string): Promise<string>;
}

/** Opens a plain TCP connection to the emulator, for tests of what a client does at the socket. */
export async function rawConnection(cli: CliEmulator): Promise<RawConnection> {
  const socket = connect(cli.port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let text = '';
  let taken = 0;
  let isClosed = false;
  const wakers = new Set<() => void>();
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    text += chunk;
    for (const wake of [...wakers]) wake();
  });
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => ((isClosed = true), resolve())));
  const answer = (): Promise<{ head: string; body: string }> =>
    new Promise((resolve, reject) => {
      const look = (): void => {
        const rest = text.slice(taken);
        const end = rest.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = rest.slice(0, end);
        const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
        if (rest.length < end + 4 + length) return;
        wakers.delete(look);
        taken += end + 4 + length;
        resolve({ head, body: rest.slice(end + 4, end + 4 + length) });
      };
      wakers.add(look);
      look();
      void closed.then(() => wakers.delete(look) && reject(new Error(`closed before an answer: ${JSON.stringify(text)}`)));
    });
  const ask = (request = HEALTH): Promise<string> => {
    const answered = answer();
    socket.write(request);
    return answered.then((a) => a.head);
  };
  return { socket, received: () => text, isClosed: () => isClosed, closed, answer, ask };
}

/**
 * Runs `svc-emulator ARGS` to its end: exit code and everything printed (stdout and stderr as they came, and each
 * apart). The child is killAll's too: a `start` that was to refuse and serves instead dies with the test, not 31
 * minutes later. With `env`, the child's `SVC_EMULATOR_*` variables are those alone (the cache folder's kept).
 */
export function runCli(args: string[], env?: Record<string, string>): Promise<{ code: number; output: string; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const inherited = env === undefined ? process.env : Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('SVC_EMULATOR_') || name === 'SVC_EMULATOR_CACHE_DIR'));
    const child = spawn(process.execPath, [cliBin(), ...args], { stdio: 'pipe', env: { ...inherited, ...env } });
    running.push(child);
    let [output, stdout, stderr] = ['', '', ''];
    child.stdout.on('data', (chunk: Buffer) => ((output += chunk.toString()), (stdout += chunk.toString())));
    child.stderr.on('data', (chunk: Buffer) => ((output += chunk.toString()), (stderr += chunk.toString())));
    child.once('close', (code, signal) => resolve({ code: code ?? (signal ? 128 : -1), output, stdout, stderr }));
  });
}
