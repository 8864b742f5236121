/**
 * What the bench scripts share: a server in a process of its own, timed from spawn, and a rich account to load
 * it with.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createServer as createNetServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

export const BIN = fileURLToPath(new URL('../bin/svc-emulator.js', import.meta.url));
export const ADMIN = 'bench-admin';

export interface Server {
  child: ChildProcess;
  base: string;
  /** Wall milliseconds from spawn to the first 200 of `healthPath`, or to "listening on" without one. */
  startupMs: number;
}

export interface StartOptions {
  /**
   * Where the server will listen, for a server that prints nothing (Prism with `-v silent`): the start is polled
   * from spawn instead of waiting for "listening on" in its output.
   */
  base?: string;
  /** Headers of the health request (an API path that wants a key). */
  headers?: Record<string, string>;
  /** Environment variables added to the bench's own. */
  env?: Record<string, string | undefined>;
}

export async function startServer(command: string[], healthPath?: string, options: StartOptions = {}): Promise<Server> {
  const started = performance.now();
  const child = spawn(process.execPath, command, { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...options.env } });
  let out = '';
  const exited = new Promise<never>((_resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${command.join(' ')} exited ${code}: ${out}`)));
  });
  exited.catch(() => undefined);
  const base =
    options.base ??
    (await Promise.race([
      exited,
      new Promise<string>((resolve) => {
        child.stdout?.on('data', (chunk: Buffer) => {
          // Only the start's lines are kept: a server that logs each request must not grow this for the run.
          if (out.length < 65_536) out += chunk.toString();
          const match = /listening on (http:\/\/\S+)/.exec(out);
          if (match?.[1]) resolve(match[1]);
        });
      }),
    ]));
  if (options.base !== undefined) child.stdout?.resume();
  if (healthPath !== undefined) {
    for (;;) {
      const res = await Promise.race([exited, fetch(`${base}${healthPath}`, { headers: options.headers ?? {} }).catch(() => null)]);
      await res?.arrayBuffer();
      if (res?.status === 200) break;
      // Not listening yet: a short pause, so the poll does not take a core from the server starting on a small machine.
      if (res === null && options.base !== undefined) await new Promise((resolve) => setTimeout(resolve, 2));
    }
  }
  return { child, base, startupMs: performance.now() - started };
}

/** Kills a server and waits until it is gone, so the next start does not share the machine with it. */
export async function stopServer(server: Server): Promise<void> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return;
  const gone = new Promise((resolve) => server.child.once('exit', resolve));
  server.child.kill('SIGKILL');
  await gone;
}

/** The emulator on a manual clock, quiet, with the bench's admin token. */
export const emulatorCommand = (storeArgs: string[], bin = BIN): string[] => [
  bin,
  'start',
  '--port',
  '0',
  '--clock',
  'manual',
  '--admin-token',
  ADMIN,
  '--log-level',
  'silent',
  ...storeArgs,
];

export async function json(url: string, init: RequestInit): Promise<Record<string, unknown>> {
  const res = await fetch(url, init);
  if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

/** A rich account and its key, so submitting for seconds never runs out of points. */
export async function benchKey(base: string): Promise<string> {
  const admin = { Authorization: `Bearer ${ADMIN}`, 'Content-Type': 'application/json' };
  const account = await json(`${base}/_emulator/accounts`, {
    method: 'POST',
    headers: admin,
    body: JSON.stringify({ points: '999999999999.000' }),
  });
  const key = await json(`${base}/_emulator/accounts/${String(account['id'])}/keys`, { method: 'POST', headers: admin, body: '{}' });
  return String(key['key']);
}

/**
 * Runs a bench script in a process of its own, so its memory is the emulator's; it prints one JSON line last.
 * `tsx: false` for a JavaScript script that must not load tsx's hooks.
 */
export async function script<T>(
  name: string,
  options: { nodeFlags?: string[]; args?: string[]; tsx?: boolean; env?: Record<string, string> } = {},
): Promise<T> {
  const path = fileURLToPath(new URL(`./${name}`, import.meta.url));
  const loader = options.tsx === false ? [] : ['--import', 'tsx'];
  const child = spawn(process.execPath, [...(options.nodeFlags ?? []), ...loader, path, ...(options.args ?? [])], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, ...options.env },
  });
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`bench/${name} exited ${code}: ${out}`);
  return JSON.parse(out.trim().split('\n').pop() ?? '{}') as T;
}

/** A port free right now, for a server that cannot be told to pick one (Prism has no `-p 0`). */
export async function freePort(): Promise<number> {
  const probe = createNetServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/**
 * The resolver for the bench's in-process emulators: every name is one public address, at once. The file
 * parameters the bench submits name example hosts, which the address policy resolves at submit; through this
 * machine's resolver that took 5 s a name under load, which times the resolver, not the emulator.
 */
export const resolvePublic = async (): Promise<string[]> => ['93.184.215.14'];
