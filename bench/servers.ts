/**
 * What the bench scripts share: a server in a process of its own, timed from spawn, and a rich account to load
 * it with.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const BIN = fileURLToPath(new URL('../bin/svc-emulator.js', import.meta.url));
export const ADMIN = 'bench-admin';

export interface Server {
  child: ChildProcess;
  base: string;
  /** Wall milliseconds from spawn to the first 200 of `healthPath`, or to "listening on" without one. */
  startupMs: number;
}

export async function startServer(command: string[], healthPath?: string): Promise<Server> {
  const started = performance.now();
  const child = spawn(process.execPath, command, { stdio: ['ignore', 'pipe', 'inherit'] });
  const base = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match?.[1]) resolve(match[1]);
    });
    child.once('exit', (code) => reject(new Error(`${command.join(' ')} exited ${code}: ${out}`)));
  });
  if (healthPath !== undefined) {
    for (;;) {
      const res = await fetch(`${base}${healthPath}`).catch(() => null);
      if (res?.status === 200) break;
    }
  }
  return { child, base, startupMs: performance.now() - started };
}

/** The emulator on a manual clock, quiet, with the bench's admin token. */
export const emulatorCommand = (storeArgs: string[]): string[] => [
  BIN,
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

/** Runs a bench script in a process of its own, so its memory is the emulator's; it prints one JSON line last. */
export async function script<T>(name: string, options: { nodeFlags?: string[]; args?: string[] } = {}): Promise<T> {
  const path = fileURLToPath(new URL(`./${name}`, import.meta.url));
  const child = spawn(process.execPath, [...(options.nodeFlags ?? []), '--import', 'tsx', path, ...(options.args ?? [])], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`bench/${name} exited ${code}: ${out}`);
  return JSON.parse(out.trim().split('\n').pop() ?? '{}') as T;
}
