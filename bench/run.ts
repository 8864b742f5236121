/**
 * `npm run bench`: start-up time to the first 200, and requests per second of GET /v1/tasks/{id} and
 * POST /v1/tasks, next to a bare node:http server answering static JSON (the ceiling on this machine), all in
 * one run. Every server runs in its own process so the load generator does not share its event loop.
 * Figures are printed, never asserted: speed targets belong here, not in timed tests.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { growth, printGrowth } from './growth.ts';
import { concurrentStreams } from './text-streams.ts';
import type { StreamFigures } from './text-streams.ts';

const BIN = fileURLToPath(new URL('../bin/svc-emulator.js', import.meta.url));
const BASELINE = fileURLToPath(new URL('./baseline-server.ts', import.meta.url));
const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 3);
const CONNECTIONS = 16;
const ADMIN = 'bench-admin';

interface Server {
  child: ChildProcess;
  base: string;
  /** Wall milliseconds from spawn to the first 200. */
  startupMs: number;
}

async function startServer(command: string[], healthPath: string): Promise<Server> {
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
  for (;;) {
    const res = await fetch(`${base}${healthPath}`).catch(() => null);
    if (res?.status === 200) break;
  }
  return { child, base, startupMs: performance.now() - started };
}

async function load(name: string, options: autocannon.Options): Promise<{ name: string; rps: number; p99: number }> {
  const result = await autocannon({ connections: CONNECTIONS, duration: SECONDS, ...options });
  const errors = result.errors + result.non2xx;
  if (errors > 0) throw new Error(`${name}: ${errors} failed requests of ${result.requests.total}`);
  return { name, rps: result.requests.average, p99: result.latency.p99 };
}

async function json(url: string, init: RequestInit): Promise<Record<string, unknown>> {
  const res = await fetch(url, init);
  if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

/** A rich account and its key, so submitting for seconds never runs out of points. */
async function benchKey(base: string): Promise<string> {
  const admin = { Authorization: `Bearer ${ADMIN}`, 'Content-Type': 'application/json' };
  const account = await json(`${base}/_emulator/accounts`, {
    method: 'POST',
    headers: admin,
    body: JSON.stringify({ points: '999999999999.000' }),
  });
  const key = await json(`${base}/_emulator/accounts/${String(account['id'])}/keys`, { method: 'POST', headers: admin, body: '{}' });
  return String(key['key']);
}

const SUBMIT = JSON.stringify({
  model: 'social-notes-data',
  input: { mode: 'note', note: 'https://notes.example.com/n/1', agree: true },
});

const CHAT = JSON.stringify({ model: 'svc-text-pro', messages: [{ role: 'user', content: 'Hello there' }], max_tokens: 64 });

async function benchEmulator(
  label: string,
  storeArgs: string[],
  withText = false,
): Promise<{ startupMs: number; rows: Awaited<ReturnType<typeof load>>[]; streams?: StreamFigures }> {
  const server = await startServer(
    [BIN, 'start', '--port', '0', '--clock', 'manual', '--admin-token', ADMIN, '--log-level', 'silent', ...storeArgs],
    '/_emulator/health',
  );
  try {
    const key = await benchKey(server.base);
    const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
    const task = await json(`${server.base}/v1/tasks`, { method: 'POST', headers, body: SUBMIT });
    const rows = [
      await load(`${label}: GET /v1/tasks/{id}`, { url: `${server.base}/v1/tasks/${String(task['id'])}`, headers }),
      await load(`${label}: POST /v1/tasks`, { url: `${server.base}/v1/tasks`, method: 'POST', headers, body: SUBMIT }),
    ];
    if (!withText) return { startupMs: server.startupMs, rows };
    rows.push(await load(`${label}: POST /v1/chat/completions`, { url: `${server.base}/v1/chat/completions`, method: 'POST', headers, body: CHAT }));
    return { startupMs: server.startupMs, rows, streams: await concurrentStreams(server.base, key) };
  } finally {
    server.child.kill('SIGKILL');
  }
}

/** Runs a bench script in a process of its own, so its memory is the emulator's; it prints one JSON line. */
async function script<T>(name: string, nodeFlags: string[] = []): Promise<T> {
  const path = fileURLToPath(new URL(`./${name}`, import.meta.url));
  const child = spawn(process.execPath, [...nodeFlags, '--import', 'tsx', path], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`bench/${name} exited ${code}: ${out}`);
  return JSON.parse(out.trim().split('\n').pop() ?? '{}') as T;
}

interface LifecycleFigures {
  tasks: number;
  submitMs: number;
  driveMs: number;
  peakRssMb: number;
  unfinished: number;
}

interface SoakFigures {
  perMinute: number;
  minutes: number;
  hourMs: number;
  samples: { minute: number; heapMb: number; rssMb: number; tasks: number; files: number; records: number; messages: number; jsonMb: number }[];
}

async function main(): Promise<void> {
  const baseline = await startServer(['--import', 'tsx', BASELINE], '/');
  let baselineRow;
  try {
    baselineRow = await load('node:http static JSON (ceiling)', { url: `${baseline.base}/` });
  } finally {
    baseline.child.kill('SIGKILL');
  }
  const bareExpress = await startServer(['--import', 'tsx', BASELINE, 'express'], '/');
  let expressRow;
  try {
    expressRow = await load('bare Express 5 static JSON', { url: `${bareExpress.base}/` });
  } finally {
    bareExpress.child.kill('SIGKILL');
  }
  const memory = await benchEmulator('memory store', ['--memory'], true);
  const dir = await mkdtemp(join(tmpdir(), 'svc-bench-'));
  let file;
  try {
    file = await benchEmulator('file store', ['--db', join(dir, 'db.json')]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }

  const line = (name: string, value: string): string => `${name.padEnd(44)} ${value}`;
  console.log(`svc-emulator bench: node ${process.version}, ${CONNECTIONS} connections, ${SECONDS} s per run\n`);
  console.log(line('start-up to first 200 (node:http baseline)', `${baseline.startupMs.toFixed(0)} ms`));
  console.log(line('start-up to first 200 (emulator, memory)', `${memory.startupMs.toFixed(0)} ms`));
  console.log(line('start-up to first 200 (emulator, file)', `${file.startupMs.toFixed(0)} ms`));
  console.log('');
  for (const row of [baselineRow, expressRow, ...memory.rows, ...file.rows]) {
    const share = ((row.rps / baselineRow.rps) * 100).toFixed(0);
    console.log(line(row.name, `${row.rps.toFixed(0).padStart(7)} req/s  p99 ${row.p99} ms  (${share}% of ceiling)`));
  }

  const streams = memory.streams;
  if (streams) {
    console.log('');
    console.log(line(`${streams.streams} concurrent streams of 500 tokens`, `total ${(streams.totalMs / 1000).toFixed(2)} s, ${streams.tokens} tokens`));
    console.log(line('  time to first byte', `p50 ${streams.ttfbP50Ms.toFixed(0)} ms, p99 ${streams.ttfbP99Ms.toFixed(0)} ms`));
  }

  const run = await script<LifecycleFigures>('lifecycle.ts');
  if (run.unfinished !== 0) throw new Error(`${run.unfinished} tasks were not terminal after 2 virtual hours`);
  console.log('');
  console.log(line(`${run.tasks} tasks: submit over HTTP (32 at a time)`, `${(run.submitMs / 1000).toFixed(1)} s`));
  console.log(line(`${run.tasks} tasks: 2 virtual hours to terminal`, `${(run.driveMs / 1000).toFixed(1)} s (120 advances of 1 min)`));
  console.log(line(`${run.tasks} tasks: peak memory (RSS)`, `${run.peakRssMb.toFixed(0)} MB`));

  console.log('');
  printGrowth(await growth(), line);

  const soak = await script<SoakFigures>('soak.ts', ['--expose-gc']);
  console.log('');
  console.log(
    `soak: file store, each virtual minute ${soak.perMinute} submits + ${soak.perMinute} text calls + ${soak.perMinute} reads, callbacks to a local receiver; ` +
      `1 virtual hour took ${(soak.hourMs / 1000).toFixed(1)} s`,
  );
  console.log(line('  virtual time', 'heap after GC    RSS   tasks  files  records  messages  data as JSON'));
  for (const s of soak.samples) {
    const when = s.minute <= soak.minutes ? `${s.minute} min` : `+31 days (sweeps ran)`;
    console.log(
      line(
        `  ${when}`,
        `${s.heapMb.toFixed(1).padStart(8)} MB ${s.rssMb.toFixed(0).padStart(5)} MB ${String(s.tasks).padStart(6)} ${String(s.files).padStart(6)} ${String(s.records).padStart(8)} ${String(s.messages).padStart(9)} ${s.jsonMb.toFixed(1).padStart(8)} MB`,
      ),
    );
  }
}

await main();
