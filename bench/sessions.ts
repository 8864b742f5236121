/**
 * Issue 38's done-when: what a session costs. Three figures, each from emulators started as `start` starts them
 * (bench/servers.ts's emulatorCommand), each in a process of its own:
 *
 * - creation: `POST /_emulator/sessions` (the emulator's admin token, an empty body) made one after another, the
 *   round trip of each, on the memory store (`--memory`) and on a file store (`--db` in a temporary folder, as
 *   `npm start` keeps one); p50 and p99 over all of them, the first (which pays what the process does once) beside;
 * - memory: the same processes' RSS (`/proc/<pid>/status` VmRSS) after a full GC, before any session, after the first
 *   100 and after the next 100: what 100 idle sessions add (the first 100 carry what the first session loads once,
 *   the next 100 are what a session costs on its own), with the JS heap's share beside;
 * - throughput: `GET /v1/tasks/{id}` on an emulator with no session beside one with 100 sessions made, with the
 *   default world's key there and with a key of one of the sessions (a session's request is routed by its key),
 *   in rounds whose order rotates (bench/rounds.ts, as bench/faults-cost.ts does).
 *
 * The GC: the memory processes run with `--expose-gc` and a hook imported before the emulator (a `data:` module)
 * that, on SIGUSR2, collects and writes the process's memory on one line of its output.
 */
import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { quantile, ratioOf, rotatingRounds, variantFigures } from './rounds.ts';
import type { Measured, Ratio, VariantFigures } from './rounds.ts';
import { ADMIN, benchKey, emulatorCommand, json, startServer, stopServer } from './servers.ts';
import type { Server } from './servers.ts';

/** Sessions made one after another in each store's creation run; memory is read after half of them and after all. */
export const CREATED = Number(process.env['BENCH_SESSIONS_CREATED'] ?? 200);
/** The sessions beside the default world in the throughput runs, and the ones the memory goal counts. */
export const BESIDE = 100;
export const ROUNDS = Number(process.env['BENCH_SESSIONS_ROUNDS'] ?? 10);
export const REQUESTS = Number(process.env['BENCH_SESSIONS_REQUESTS'] ?? 2_500);
const WARMUP_REQUESTS = 3_000;
/** The goals: creation p50 at most this, 100 idle sessions at most this much memory, GET req/s within 10 %. */
export const GOAL_CREATION_MS = 25;
export const GOAL_MEMORY_MB = 150;
export const GOAL_THROUGHPUT = 0.9;

const MARK = 'bench-gc ';
/** Imported before the emulator: a full GC on SIGUSR2, then the process's memory on one line of stdout. */
const GC_HOOK = `data:text/javascript,process.on('SIGUSR2',()=>{globalThis.gc();process.stdout.write('${MARK}'+JSON.stringify(process.memoryUsage())+'\\n')})`;

const SUBMIT = JSON.stringify({ model: 'social-notes-data', input: { mode: 'note', note: 'https://notes.example.com/n/1', agree: true } });
const adminHeaders = { Authorization: `Bearer ${ADMIN}`, 'Content-Type': 'application/json' };
const keyHeaders = (key: string): Record<string, string> => ({ Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' });

export interface Memory {
  rssMb: number;
  /** The JS heap used: the rest of RSS is native (SQLite's connections, the code, the allocator's own). */
  heapMb: number;
}

export interface StoreFigures {
  label: string;
  created: number;
  firstMs: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** p50 of the second half alone: whether a session costs more to make as more exist. */
  laterP50Ms: number;
  before: Memory;
  /** Sessions made when `atHalf` was read: BESIDE (what the memory goal counts), or half of fewer. */
  half: number;
  atHalf: Memory;
  all: Memory;
}

export interface SessionsFigures {
  loadAverage: { before: number; after: number };
  stores: StoreFigures[];
  /** fsync of a 4 KB write in the file store's folder, just before its run: a session's new store waits for several. */
  fsync: { p50Ms: number; p99Ms: number };
  rounds: number;
  requests: number;
  alone: VariantFigures;
  besideDefault: VariantFigures;
  besideSession: VariantFigures;
  /** With 100 sessions (the default key, a session's key) over no session, round by round. */
  defaultRatio: { rps: Ratio; cpuRps: Ratio };
  sessionRatio: { rps: Ratio; cpuRps: Ratio };
}

/** Collects what the gc hook writes; `memory()` asks for a GC and resolves with the line that follows. */
function gcReader(server: Server): () => Promise<Memory> {
  let buffered = '';
  const waiting: ((m: Memory) => void)[] = [];
  server.child.stdout?.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    for (let at = buffered.indexOf('\n'); at >= 0; at = buffered.indexOf('\n')) {
      const text = buffered.slice(0, at);
      buffered = buffered.slice(at + 1);
      if (!text.startsWith(MARK)) continue;
      const m = JSON.parse(text.slice(MARK.length)) as NodeJS.MemoryUsage;
      waiting.shift()?.({ rssMb: 0, heapMb: m.heapUsed / 1048576 });
    }
  });
  const pid = server.child.pid ?? 0;
  return async () => {
    // A moment for what the last request left (its socket, a commit's effects), a few requests as a client's poll
    // would make, then the GC; RSS is read after it.
    await new Promise((resolve) => setTimeout(resolve, 300));
    for (let i = 0; i < 3; i++) await json(`${server.base}/_emulator/health`, {});
    const collected = new Promise<Memory>((resolve) => waiting.push(resolve));
    server.child.kill('SIGUSR2');
    // A process that died or lost its hook answers nothing: the bench stops rather than waits for ever.
    const memory = await Promise.race([
      collected,
      new Promise<never>((_resolve, reject) => setTimeout(() => reject(new Error('sessions: the emulator did not answer the GC signal')), 10_000).unref()),
    ]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    return { ...memory, rssMb: await rssMb(pid) };
  };
}

async function rssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN) / 1024;
}

/** 100 fsyncs of a 4 KB write in `dir`: what the disk makes a file store's commits wait for right now. */
function fsyncTimes(dir: string): { p50Ms: number; p99Ms: number } {
  const fd = openSync(join(dir, 'fsync-probe'), 'w');
  const times: number[] = [];
  try {
    const page = Buffer.alloc(4096, 1);
    for (let i = 0; i < 100; i++) {
      writeSync(fd, page, 0, page.length, 0);
      const started = performance.now();
      fsyncSync(fd);
      times.push(performance.now() - started);
    }
  } finally {
    closeSync(fd);
  }
  return { p50Ms: quantile(times, 0.5), p99Ms: quantile(times, 0.99) };
}

/** One session made, and its round trip in ms. */
async function createSession(base: string): Promise<{ ms: number; session: Record<string, unknown> }> {
  const started = performance.now();
  const session = await json(`${base}/_emulator/sessions`, { method: 'POST', headers: adminHeaders, body: '{}' });
  return { ms: performance.now() - started, session };
}

async function storeRun(label: string, storeArgs: string[]): Promise<StoreFigures> {
  const server = await startServer(['--expose-gc', '--import', GC_HOOK, ...emulatorCommand(storeArgs)], '/_emulator/health');
  try {
    const memory = gcReader(server);
    const before = await memory();
    const times: number[] = [];
    const half = Math.min(BESIDE, Math.floor(CREATED / 2));
    for (let i = 0; i < half; i++) times.push((await createSession(server.base)).ms);
    const atHalf = await memory();
    for (let i = half; i < CREATED; i++) times.push((await createSession(server.base)).ms);
    const all = await memory();
    const later = times.slice(half);
    return {
      label,
      created: CREATED,
      firstMs: times[0] ?? NaN,
      p50Ms: quantile(times, 0.5),
      p99Ms: quantile(times, 0.99),
      maxMs: Math.max(...times),
      laterP50Ms: quantile(later, 0.5),
      before,
      half,
      atHalf,
      all,
    };
  } finally {
    await stopServer(server);
  }
}

/** An emulator with `sessions` sessions made: its default key's task and, with sessions, one of a session's. */
async function prepare(sessions: number): Promise<{ server: Server; own: Measured; session: Measured | null }> {
  const server = await startServer(emulatorCommand(['--memory']), '/_emulator/health');
  const key = await benchKey(server.base);
  const task = await json(`${server.base}/v1/tasks`, { method: 'POST', headers: keyHeaders(key), body: SUBMIT });
  const own = { server, url: `${server.base}/v1/tasks/${String(task['id'])}`, headers: keyHeaders(key) };
  let sessionKey: string | null = null;
  // The key of the middle one: the router must not find it by luck of being the first or the last made.
  for (let i = 0; i < sessions; i++) {
    const { session } = await createSession(server.base);
    if (i === Math.floor(sessions / 2)) sessionKey = String(session['key']);
  }
  if (sessionKey === null) return { server, own, session: null };
  const sessionTask = await json(`${server.base}/v1/tasks`, { method: 'POST', headers: keyHeaders(sessionKey), body: SUBMIT });
  return { server, own, session: { server, url: `${server.base}/v1/tasks/${String(sessionTask['id'])}`, headers: keyHeaders(sessionKey) } };
}

export async function sessionsBench(): Promise<SessionsFigures> {
  const before = loadavg()[0] ?? NaN;
  const stores: StoreFigures[] = [];
  stores.push(await storeRun('memory store (--memory)', ['--memory']));
  const dir = await mkdtemp(join(tmpdir(), 'svc-bench-sessions-'));
  let fsync;
  try {
    fsync = fsyncTimes(dir);
    stores.push(await storeRun('file store (--db)', ['--db', join(dir, 'store.db')]));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }

  const servers: Server[] = [];
  try {
    const alone = await prepare(0);
    servers.push(alone.server);
    const beside = await prepare(BESIDE);
    servers.push(beside.server);
    if (!beside.session) throw new Error('sessions: no session key');
    const rounds = await rotatingRounds([alone.own, beside.own, beside.session], ROUNDS, REQUESTS, WARMUP_REQUESTS);
    const ratio = (i: number, figure: 'rps' | 'cpuRps'): Ratio => ratioOf(rounds[i] ?? [], rounds[0] ?? [], figure);
    return {
      loadAverage: { before, after: loadavg()[0] ?? NaN },
      stores,
      fsync,
      rounds: ROUNDS,
      requests: REQUESTS,
      alone: variantFigures('no session, the default key', rounds[0] ?? []),
      besideDefault: variantFigures(`${BESIDE} sessions, the default key`, rounds[1] ?? []),
      besideSession: variantFigures(`${BESIDE} sessions, a session's key`, rounds[2] ?? []),
      defaultRatio: { rps: ratio(1, 'rps'), cpuRps: ratio(1, 'cpuRps') },
      sessionRatio: { rps: ratio(2, 'rps'), cpuRps: ratio(2, 'cpuRps') },
    };
  } finally {
    for (const server of servers) await stopServer(server);
  }
}

export function printSessions(f: SessionsFigures, line: (text: string) => void): void {
  const ms = (n: number): string => `${n.toFixed(1).padStart(6)} ms`;
  const mb = (n: number): string => `${n.toFixed(1).padStart(6)} MB`;
  const pct = (r: number): string => `${(r * 100).toFixed(1)}%`;
  const spread = (r: Ratio): string => `${pct(r.median)} (middle half of rounds ${pct(r.q1)} to ${pct(r.q3)})`;
  const rps = (n: number): string => Math.round(n).toLocaleString('en-US').padStart(7);
  const created = f.stores[0]?.created ?? CREATED;
  const half = f.stores[0]?.half ?? BESIDE;
  line(
    `sessions: POST /_emulator/sessions one after another, ${created} per store, then GET /v1/tasks/{id} with and without ${BESIDE} sessions ` +
      `(load average ${f.loadAverage.before.toFixed(1)} before, ${f.loadAverage.after.toFixed(1)} after)`,
  );
  line(`  creation round trip ${''.padEnd(16)}     first       p50       p99       max   p50 of the last ${created - half}`);
  for (const s of f.stores) {
    const met = s.p50Ms <= GOAL_CREATION_MS ? 'met' : 'not met';
    line(`  ${s.label.padEnd(36)} ${ms(s.firstMs)} ${ms(s.p50Ms)} ${ms(s.p99Ms)} ${ms(s.maxMs)} ${ms(s.laterP50Ms)}   goal p50 ≤ ${GOAL_CREATION_MS} ms: ${met}`);
  }
  // A file store's new session waits for the disk on each of its first commits: this moves its figure most.
  line(`  ${'this disk: fsync of a 4 KB write'.padEnd(36)} ${''.padEnd(9)} ${ms(f.fsync.p50Ms)} ${ms(f.fsync.p99Ms)}   (in the file store's folder, just before its run)`);
  line(`  memory after GC (RSS; JS heap) ${''.padEnd(5)}   no session       first ${half}            next ${created - half}`);
  for (const s of f.stores) {
    const first = s.atHalf.rssMb - s.before.rssMb;
    const next = s.all.rssMb - s.atHalf.rssMb;
    // The goal counts BESIDE sessions: a run that made fewer has no verdict.
    const met = s.half < BESIDE ? 'n/a' : first <= GOAL_MEMORY_MB ? 'met' : 'not met';
    line(
      `  ${s.label.padEnd(36)} ${mb(s.before.rssMb)}; ${mb(s.before.heapMb)}   +${mb(first).trim()}; +${mb(s.atHalf.heapMb - s.before.heapMb).trim()}   ` +
        `+${mb(next).trim()}; +${mb(s.all.heapMb - s.atHalf.heapMb).trim()}   goal ${BESIDE} sessions ≤ ${GOAL_MEMORY_MB} MB: ${met}`,
    );
  }
  line(`  GET /v1/tasks/{id}, memory store, ${f.rounds} rounds of ${f.requests.toLocaleString('en-US')} requests, the three in rotating order; medians of the rounds`);
  line(`  ${''.padEnd(36)}   req/s   req per server CPU second`);
  for (const v of [f.alone, f.besideDefault, f.besideSession]) line(`  ${v.label.padEnd(36)} ${rps(v.rps)}   ${rps(v.cpuRps)}`);
  for (const [name, r] of [
    ['the default key', f.defaultRatio],
    ["a session's key", f.sessionRatio],
  ] as const) {
    const { median: judged, q1, q3 } = r.rps;
    // Rounds that scatter wider than the margin say the machine was busy with other work: the verdict is then noise.
    const scattered = q3 - q1 > 1 - GOAL_THROUGHPUT ? `; but the rounds' middle half spans ${pct(q1)} to ${pct(q3)}, wider than the margin: rerun on a quiet machine to trust it` : '';
    line(`  ${BESIDE} sessions / none, ${name.padEnd(16)} req/s ${spread(r.rps)}; per CPU second ${spread(r.cpuRps)}`);
    line(`    goal: within ${pct(1 - GOAL_THROUGHPUT)} (${pct(GOAL_THROUGHPUT)} or more): ${judged >= GOAL_THROUGHPUT ? 'met' : 'not met'} (${pct(judged)})${scattered}`);
  }
}
