/**
 * Growth: latency of submit and get on an empty file store and on one holding 100,000 tasks and 1,000,000 call
 * records (bench/grow-store.ts), side by side, at a fixed request rate so the figures are per-request cost rather
 * than queueing; plus start-up (loading) time, memory, journal bytes per submit, and what one whole-file write
 * of the same data through lowdb's own JSON file adapter costs (the reason the store journals instead).
 */
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import autocannon from 'autocannon';
import { Low } from 'lowdb';
import { DataFile } from 'lowdb/node';
import { loadStoreFile, openStore } from '../src/store/index.ts';
import { ADMIN, benchKey, emulatorCommand, json, script, startServer } from './servers.ts';
import type { StoreData } from '../src/store/index.ts';

const RATE = Number(process.env['BENCH_GROWTH_RATE'] ?? 400);
const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 3) + 2;

export interface GrowthRow {
  label: string;
  tasks: number;
  records: number;
  startupMs: number;
  rssMb: number;
  get: { p50: number; p99: number; rps: number };
  submit: { p50: number; p99: number; rps: number };
  journalBytesPerSubmit: number;
  /** Median of 5 one-at-a-time listings of one page (20). */
  listTasksMs: number;
  listRecordsMs: number;
}

export interface GrowthFigures {
  rate: number;
  seconds: number;
  empty: GrowthRow;
  grown: GrowthRow;
  snapshotMb: number;
  buildMs: number;
  lowdbWriteMs: number;
  compaction: { ms: number; maxStallMs: number; p99StallMs: number };
}

const rssMb = async (pid: number): Promise<number> => {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kb / 1024;
};

const journalBytes = async (dir: string): Promise<number> => {
  let total = 0;
  for (const name of await readdir(dir)) if (name.endsWith('.journal')) total += (await stat(join(dir, name))).size;
  return total;
};

async function measure(options: autocannon.Options): Promise<{ p50: number; p99: number; rps: number; total: number }> {
  // A second at the same rate first, so the figures are of a warm process.
  await autocannon({ connections: 8, duration: 1, overallRate: RATE, ...options });
  const result = await autocannon({ connections: 8, duration: SECONDS, overallRate: RATE, ...options });
  const failed = result.errors + result.non2xx;
  if (failed > 0) throw new Error(`${String(options.method ?? 'GET')} ${String(options.url)}: ${failed} failed of ${result.requests.total}`);
  return { p50: result.latency.p50, p99: result.latency.p99, rps: result.requests.average, total: result.requests.total };
}

/** The median wall time of five requests made one at a time. */
async function medianMs(url: string, headers: Record<string, string>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 5; i += 1) {
    const started = performance.now();
    await json(url, { headers });
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b)[2] ?? 0;
}

async function row(label: string, dir: string, counts: { tasks: number; records: number }): Promise<GrowthRow> {
  const server = await startServer(emulatorCommand(['--db', join(dir, 'db.json')]));
  try {
    const headers = { Authorization: `Bearer ${await benchKey(server.base)}`, 'Content-Type': 'application/json' };
    const body = JSON.stringify({ model: 'social-notes-data', input: { mode: 'note', note: 'https://notes.example.com/n/1', agree: true } });
    const task = await json(`${server.base}/v1/tasks`, { method: 'POST', headers, body });
    const get = await measure({ url: `${server.base}/v1/tasks/${String(task['id'])}`, headers });
    const before = await journalBytes(dir);
    const submit = await measure({ url: `${server.base}/v1/tasks`, method: 'POST', headers, body });
    const after = await journalBytes(dir);
    const listTasksMs = await medianMs(`${server.base}/v1/tasks?limit=20`, headers);
    const listRecordsMs = await medianMs(`${server.base}/_emulator/records?limit=20`, { Authorization: `Bearer ${ADMIN}` });
    return {
      label,
      ...counts,
      startupMs: server.startupMs,
      rssMb: await rssMb(server.child.pid ?? 0),
      get: { p50: get.p50, p99: get.p99, rps: get.rps },
      submit: { p50: submit.p50, p99: submit.p99, rps: submit.rps },
      // Each submit also leaves a call record; the warm-up second's submits are in the bytes too.
      journalBytesPerSubmit: (after - before) / (submit.total + RATE),
      listTasksMs,
      listRecordsMs,
    };
  } finally {
    server.child.kill('SIGKILL');
  }
}

/** What lowdb's stock adapter would do on every commit: stringify and rewrite the whole store. */
async function lowdbWrite(dir: string): Promise<number> {
  const data = (await loadStoreFile(join(dir, 'db.json'))).data;
  const lowdb = new Low<StoreData>(new DataFile<StoreData>(join(dir, 'lowdb.json'), { parse: JSON.parse, stringify: (d) => JSON.stringify(d) }), data);
  const wrote = performance.now();
  await lowdb.write();
  const ms = performance.now() - wrote;
  await rm(join(dir, 'lowdb.json'), { force: true });
  return ms;
}

/** One compaction of the grown store, in this process: its wall time and the longest the event loop waited. */
async function compactionOf(path: string): Promise<{ ms: number; maxStallMs: number; p99StallMs: number }> {
  const store = await openStore({ path });
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  const started = performance.now();
  await store.compact();
  const ms = performance.now() - started;
  delay.disable();
  await store.close();
  return { ms, maxStallMs: delay.max / 1e6, p99StallMs: delay.percentile(99) / 1e6 };
}

export async function growth(tasks = 100_000, records = 1_000_000): Promise<GrowthFigures> {
  const emptyDir = await mkdtemp(join(tmpdir(), 'svc-growth-empty-'));
  const grownDir = await mkdtemp(join(tmpdir(), 'svc-growth-grown-'));
  try {
    const empty = await row('empty store', emptyDir, { tasks: 0, records: 0 });

    const built = performance.now();
    await script('grow-store.ts', { args: [join(grownDir, 'db.json'), String(tasks), String(records)] });
    const buildMs = performance.now() - built;
    const snapshotMb = (await stat(join(grownDir, 'db.json'))).size / 1048576;

    const lowdbWriteMs = await lowdbWrite(grownDir);
    const grown = await row('100k tasks, 1M records', grownDir, { tasks, records });
    const compaction = await compactionOf(join(grownDir, 'db.json'));
    return { rate: RATE, seconds: SECONDS, empty, grown, snapshotMb, buildMs, lowdbWriteMs, compaction };
  } finally {
    await rm(emptyDir, { recursive: true, force: true });
    await rm(grownDir, { recursive: true, force: true });
  }
}

export function printGrowth(figures: GrowthFigures, line: (name: string, value: string) => string): void {
  const { empty, grown } = figures;
  const ratio = (a: number, b: number): string => (b > 0 ? `${(a / b).toFixed(2)}×` : 'n/a');
  console.log(`growth: file store, ${figures.rate} req/s for ${figures.seconds} s per figure (fixed rate: latency is per-request cost)`);
  console.log(line('', `${'empty'.padStart(12)} ${'100k / 1M'.padStart(12)}   grown/empty`));
  const pair = (name: string, a: number, b: number, unit: string): void => {
    console.log(line(name, `${`${a.toFixed(a < 10 ? 1 : 0)} ${unit}`.padStart(12)} ${`${b.toFixed(b < 10 ? 1 : 0)} ${unit}`.padStart(12)}   ${ratio(b, a)}`));
  };
  pair('  GET /v1/tasks/{id} p50', empty.get.p50, grown.get.p50, 'ms');
  pair('  GET /v1/tasks/{id} p99', empty.get.p99, grown.get.p99, 'ms');
  pair('  POST /v1/tasks p50', empty.submit.p50, grown.submit.p50, 'ms');
  pair('  POST /v1/tasks p99', empty.submit.p99, grown.submit.p99, 'ms');
  pair('  journal bytes per submit', empty.journalBytesPerSubmit, grown.journalBytesPerSubmit, 'B');
  pair('  GET /v1/tasks (a page; scans every task)', empty.listTasksMs, grown.listTasksMs, 'ms');
  pair('  GET /_emulator/records (newest page)', empty.listRecordsMs, grown.listRecordsMs, 'ms');
  pair('  start-up to listening', empty.startupMs, grown.startupMs, 'ms');
  pair('  memory after the runs (RSS)', empty.rssMb, grown.rssMb, 'MB');
  console.log(line('  grown snapshot on disk', `${figures.snapshotMb.toFixed(0)} MB (built in ${(figures.buildMs / 1000).toFixed(1)} s)`));
  const { compaction } = figures;
  console.log(
    line('  one compaction of it (background)', `${(compaction.ms / 1000).toFixed(1)} s; event loop waited p99 ${compaction.p99StallMs.toFixed(0)} ms, at most ${compaction.maxStallMs.toFixed(0)} ms`),
  );
  console.log(line('  one lowdb whole-file write of it', `${figures.lowdbWriteMs.toFixed(0)} ms (what every commit would cost without the journal)`));
}
