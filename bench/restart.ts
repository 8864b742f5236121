/**
 * A full queue starts like an empty one (issue 42): the median start-up, spawn to the first 200 of
 * /_emulator/health, of the emulator on an empty file store and on one holding UNFINISHED queued tasks (built by
 * bench/grow-store.ts --unfinished), started in turn, each killed once it answered.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { emulatorCommand, script, startServer, stopServer } from './servers.ts';

const UNFINISHED = Number(process.env['BENCH_RESTART_TASKS'] ?? 50_000);
const STARTS = 5;

export interface RestartFigures {
  tasks: number;
  emptyMs: number;
  fullMs: number;
  buildMs: number;
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;

async function startOnce(path: string, bin: string | undefined): Promise<number> {
  const server = await startServer(emulatorCommand(['--db', path], bin), '/_emulator/health');
  await stopServer(server);
  return server.startupMs;
}

export async function restartBench(bin?: string): Promise<RestartFigures> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-restart-'));
  try {
    const empty = join(dir, 'empty.db');
    const full = join(dir, 'full.db');
    const built = await script<{ tasks: number; ms: number }>('grow-store.ts', { args: [full, String(UNFINISHED), '0', '--unfinished'] });
    // The empty store made by a first start; every later start of either is a restart.
    await startOnce(empty, bin);
    await startOnce(full, bin);
    const times = { empty: [] as number[], full: [] as number[] };
    for (let i = 0; i < STARTS; i++) {
      times.empty.push(await startOnce(empty, bin));
      times.full.push(await startOnce(full, bin));
    }
    return { tasks: built.tasks, emptyMs: median(times.empty), fullMs: median(times.full), buildMs: built.ms };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
