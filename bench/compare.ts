/**
 * Issue 16's comparison, measured: the emulator as packed (a copy with `dist/` built, bench/packed.ts) beside
 * Prism mocking openapi/service.yaml and a bare Express 5 hello-world (bench/baseline-server.ts). For each: start-up
 * from spawn to the first 200 (median of STARTS), and GET /v1/tasks/{id} and POST /v1/tasks under the same load;
 * for the emulator also the in-process start (bench/in-process.mjs) and 200 concurrent streams. Printed by
 * bench/comparison-table.ts.
 *
 * The emulator keeps what it derives from its documents in a cache (src/cache/derived.ts); here it is a fresh
 * folder per series, so each series' first start is the one a new install pays and the median is a warm start.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { combined, load, median, SECONDS } from './load.ts';
import type { LoadFigures } from './load.ts';
import type autocannon from 'autocannon';
import { buildPackedCopy } from './packed.ts';
import { benchKey, emulatorCommand, freePort, json, script, startServer, stopServer } from './servers.ts';
import type { Server } from './servers.ts';
import { restartBench } from './restart.ts';
import type { RestartFigures } from './restart.ts';
import { concurrentStreams, recordStream } from './text-streams.ts';
import type { StreamFigures } from './text-streams.ts';

const STARTS = Number(process.env['BENCH_STARTS'] ?? 5);
/**
 * The emulator and its baseline take turns, round by round (SECONDS split into ROUNDS of load, ROUNDS stream
 * rounds each): a machine whose speed drifts over the minutes of a run (a shared one does) moves both sides of a
 * ratio alike, and each ratio is the median of the rounds' own.
 */
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 3);
const WARMUP_SECONDS = 1;
const file = (path: string): string => fileURLToPath(new URL(path, import.meta.url));
const OPENAPI = file('../openapi/service.yaml');
const BASELINE = file('./baseline-server.ts');
const PRISM_CLI = file('../node_modules/@stoplight/prism-cli/dist/index.js');
const PRISM_VERSION = String((JSON.parse(readFileSync(file('../node_modules/@stoplight/prism-cli/package.json'), 'utf8')) as { version: unknown }).version);
const SRC_INDEX = file('../src/index.ts');

/** A task id Prism's answer does not depend on; the emulator's is made by a submit before the load. */
const ANY_TASK = 'T261123090000ABCDEF';
const SUBMIT = JSON.stringify({ model: 'social-notes-data', input: { mode: 'note', note: 'https://notes.example.com/n/1', agree: true } });

export interface InProcessFigures {
  bootMs: number;
  importMs: number;
  createMs: number;
  firstOkMs: number;
}

export interface Startups {
  /** Median of STARTS, spawn to the first 200. */
  medianMs: number;
  /** The first of them: for the emulator, with an empty cache. */
  firstMs: number;
}

export interface ServerFigures {
  startup: Startups;
  get: LoadFigures;
  post: LoadFigures;
}

export interface Comparison {
  /** The machine's 1-minute load average when the comparison began and ended: other work skews every figure. */
  loadAverage: { before: number; after: number };
  starts: number;
  warmupSeconds: number;
  prismVersion: string;
  buildMs: number;
  buildWarning: string | null;
  emulator: ServerFigures & { streams: StreamFigures; rssMb: number; restart: RestartFigures };
  /** Emulator ÷ baseline, each the median of the alternated rounds' ratios (req/s ÷ Express; first byte ÷ bare SSE). */
  ratios: { get: number; post: number; ttfbP50: number; ttfbP99: number };
  rounds: number;
  prism: ServerFigures;
  express: ServerFigures;
  /** The same streams from a bare node:http server sending the emulator's own events at once. */
  sse: StreamFigures;
  /** STARTS fresh processes each, the packed dist/index.js and src/index.ts through tsx: medians, and the first. */
  inProcess: { dist: InProcessFigures; distFirst: InProcessFigures; src: InProcessFigures };
  /** When the environment names extra CA certificates, what node's boot pays for reading them (null otherwise). */
  extraCa: ExtraCaFigures | null;
}

export interface ExtraCaFigures {
  file: string;
  /** Medians of STARTS: `node -e 0` with and without NODE_EXTRA_CA_CERTS. */
  bootWithMs: number;
  bootWithoutMs: number;
  /** The packed start (warm cache) without it, median of STARTS. */
  startWithoutMs: number;
}

/** Starts and stops a server STARTS times, one at a time. */
async function startups(start: () => Promise<Server>): Promise<Startups> {
  const times: number[] = [];
  for (let i = 0; i < STARTS; i++) {
    const server = await start();
    times.push(server.startupMs);
    await stopServer(server);
  }
  return { medianMs: median(times), firstMs: times[0] ?? NaN };
}

/** The packed CLI started as a user starts it (warn: without the log line of the health request), to its first 200. */
const packedStart = (bin: string, env: Record<string, string | undefined>): Promise<Server> =>
  startServer([bin, 'start', '--memory', '--port', '0', '--log-level', 'warn'], '/_emulator/health', { env });

/** Wall time of `node -e 0`, spawn to exit, with `env`. */
function bootOnce(env: NodeJS.ProcessEnv): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', '0'], { env, stdio: 'ignore' });
    child.once('error', reject);
    child.once('exit', () => resolve(performance.now() - started));
  });
}

/**
 * Node reads the file NODE_EXTRA_CA_CERTS names while it boots, before any script runs; where the environment sets
 * it (a machine's whole CA bundle), that is part of every start here, the emulator's and the baselines' alike. Its
 * share is measured beside the start, so the start's figure reads for what it is.
 */
async function extraCaFigures(bin: string, cacheDir: string): Promise<ExtraCaFigures | null> {
  const file = process.env['NODE_EXTRA_CA_CERTS'];
  if (!file) return null;
  const without: NodeJS.ProcessEnv = { ...process.env, NODE_EXTRA_CA_CERTS: undefined };
  const withMs: number[] = [];
  const withoutMs: number[] = [];
  for (let i = 0; i < STARTS; i++) {
    withMs.push(await bootOnce(process.env));
    withoutMs.push(await bootOnce(without));
  }
  const starts = await startups(() => packedStart(bin, { SVC_EMULATOR_CACHE_DIR: cacheDir, NODE_EXTRA_CA_CERTS: undefined }));
  return { file, bootWithMs: median(withMs), bootWithoutMs: median(withoutMs), startWithoutMs: starts.medianMs };
}

async function inProcess(args: { index: string; tsx: boolean; cacheDir: string }): Promise<{ median: InProcessFigures; first: InProcessFigures }> {
  const runs: InProcessFigures[] = [];
  for (let i = 0; i < STARTS; i++) {
    runs.push(await script<InProcessFigures>('in-process.mjs', { args: [args.index], tsx: args.tsx, env: { SVC_EMULATOR_CACHE_DIR: args.cacheDir } }));
  }
  const pick = (key: keyof InProcessFigures): number => median(runs.map((r) => r[key]));
  const first = runs[0];
  if (!first) throw new Error('BENCH_STARTS must be at least 1');
  return { median: { bootMs: pick('bootMs'), importMs: pick('importMs'), createMs: pick('createMs'), firstOkMs: pick('firstOkMs') }, first };
}

interface Target {
  base: string;
  taskId: string;
  headers: Record<string, string>;
}

/** The two loads every server is measured under: polling a task, and submitting one. */
const loadOf = (label: string, target: Target, method: 'GET' | 'POST'): [string, autocannon.Options] =>
  method === 'GET'
    ? [`${label}: GET /v1/tasks/{id}`, { url: `${target.base}/v1/tasks/${target.taskId}`, headers: target.headers }]
    : [`${label}: POST /v1/tasks`, { url: `${target.base}/v1/tasks`, method: 'POST', headers: target.headers, body: SUBMIT }];

/** GET then POST under the same load, after a warm-up of each; failures are counted, not thrown. */
async function getAndPost(label: string, target: Target): Promise<Pick<ServerFigures, 'get' | 'post'>> {
  const options = { warmupSeconds: WARMUP_SECONDS, strict: false };
  const get = await load(...loadOf(label, target, 'GET'), options);
  const post = await load(...loadOf(label, target, 'POST'), options);
  return { get, post };
}

/**
 * GET then POST on the emulator and on Express in turns: a round of one, a round of the other, ROUNDS times each
 * (the first after a warm-up). Each side's figures are its rounds together; the ratio is the median round's.
 */
async function alternatedLoads(emulator: Target, express: Target): Promise<{ emulator: Pick<ServerFigures, 'get' | 'post'>; express: Pick<ServerFigures, 'get' | 'post'>; get: number; post: number }> {
  const one = (label: string, target: Target, method: 'GET' | 'POST', round: number): Promise<LoadFigures> =>
    load(...loadOf(label, target, method), { strict: false, seconds: SECONDS / ROUNDS, ...(round === 0 ? { warmupSeconds: WARMUP_SECONDS } : {}) });
  const turns = async (method: 'GET' | 'POST') => {
    const rounds: [LoadFigures, LoadFigures][] = [];
    for (let round = 0; round < ROUNDS; round++) rounds.push([await one('emulator', emulator, method, round), await one('Express', express, method, round)]);
    return { emulator: combined(rounds.map((r) => r[0])), express: combined(rounds.map((r) => r[1])), ratio: median(rounds.map(([e, x]) => e.rps / x.rps)) };
  };
  const get = await turns('GET');
  const post = await turns('POST');
  return { emulator: { get: get.emulator, post: post.emulator }, express: { get: get.express, post: post.express }, get: get.ratio, post: post.ratio };
}

/** 200 streams from the emulator and from the bare SSE server in turns, ROUNDS each: medians, and the median round's ratios. */
async function alternatedStreams(emulatorBase: string, key: string, sseBase: string): Promise<{ emulator: StreamFigures; sse: StreamFigures; ttfbP50: number; ttfbP99: number }> {
  const rounds: [StreamFigures, StreamFigures][] = [];
  for (let round = 0; round < ROUNDS; round++) rounds.push([await concurrentStreams(emulatorBase, key), await concurrentStreams(sseBase, 'none')]);
  const side = (at: 0 | 1): StreamFigures => {
    const all = rounds.map((r) => r[at]);
    const mid = (pick: (f: StreamFigures) => number): number => median(all.map(pick));
    return { streams: all[0]?.streams ?? 0, ttfbP50Ms: mid((f) => f.ttfbP50Ms), ttfbP99Ms: mid((f) => f.ttfbP99Ms), totalMs: mid((f) => f.totalMs), tokens: mid((f) => f.tokens) };
  };
  return {
    emulator: side(0),
    sse: side(1),
    ttfbP50: median(rounds.map(([e, b]) => e.ttfbP50Ms / b.ttfbP50Ms)),
    ttfbP99: median(rounds.map(([e, b]) => e.ttfbP99Ms / b.ttfbP99Ms)),
  };
}

/** Resident memory of a process, in MiB (Linux: /proc). */
async function rssMb(pid: number | undefined): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN) / 1024;
}

type Measured = Omit<Comparison['emulator'], 'restart'> & { express: Pick<ServerFigures, 'get' | 'post'>; sse: StreamFigures; ratios: Comparison['ratios'] };

/** The emulator's start-ups, then its loads and streams in turns with Express's and the bare SSE server's. */
async function measureEmulator(bin: string, cacheDir: string, eventsFile: string): Promise<Measured> {
  const env = { SVC_EMULATOR_CACHE_DIR: cacheDir };
  // The load runs quiet too (one log line per request otherwise).
  const startup = await startups(() => packedStart(bin, env));
  const server = await startServer(emulatorCommand(['--memory'], bin), '/_emulator/health', { env });
  const express = await startExpress();
  let sse: Server | null = null;
  try {
    const key = await benchKey(server.base);
    const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
    const task = await json(`${server.base}/v1/tasks`, { method: 'POST', headers, body: SUBMIT });
    const loads = await alternatedLoads({ base: server.base, taskId: String(task['id']), headers }, { base: express.base, taskId: ANY_TASK, headers: { 'Content-Type': 'application/json' } });
    // After 8 s of the emulator's load: a warm-up and the rounds of GET, then of POST.
    const rss = await rssMb(server.child.pid);
    await writeFile(eventsFile, await recordStream(server.base, key));
    sse = await startServer(['--import', 'tsx', BASELINE, 'sse', eventsFile]);
    const streams = await alternatedStreams(server.base, key, sse.base);
    return {
      startup,
      ...loads.emulator,
      rssMb: rss,
      streams: streams.emulator,
      express: loads.express,
      sse: streams.sse,
      ratios: { get: loads.get, post: loads.post, ttfbP50: streams.ttfbP50, ttfbP99: streams.ttfbP99 },
    };
  } finally {
    await stopServer(server);
    await stopServer(express);
    if (sse) await stopServer(sse);
  }
}

async function measurePrism(): Promise<ServerFigures> {
  // Prism wants the bearer header the document's security asks for (401 without) and answers the examples.
  const headers = { Authorization: 'Bearer sk-bench', 'Content-Type': 'application/json' };
  const start = async (): Promise<Server> => {
    const port = await freePort();
    // Quiet, as the emulator is under load: at its default level Prism writes several lines per request.
    const command = [PRISM_CLI, 'mock', '-p', String(port), '-h', '127.0.0.1', '-v', 'silent', OPENAPI];
    return startServer(command, `/v1/tasks/${ANY_TASK}`, { base: `http://127.0.0.1:${port}`, headers });
  };
  const startup = await startups(start);
  const server = await start();
  try {
    return { startup, ...(await getAndPost('Prism', { base: server.base, taskId: ANY_TASK, headers })) };
  } finally {
    await stopServer(server);
  }
}

const startExpress = (): Promise<Server> => startServer(['--import', 'tsx', BASELINE, 'express'], `/v1/tasks/${ANY_TASK}`);

export async function compare(): Promise<Comparison> {
  const before = loadavg()[0] ?? NaN;
  const packed = await buildPackedCopy();
  try {
    const eventsFile = join(packed.scratch, 'stream.txt');
    const { express: expressLoads, sse, ratios, ...measured } = await measureEmulator(packed.bin, join(packed.scratch, 'cache-cli'), eventsFile);
    const emulator = { ...measured, restart: await restartBench(packed.bin) };
    const extraCa = await extraCaFigures(packed.bin, join(packed.scratch, 'cache-cli'));
    const dist = await inProcess({ index: packed.index, tsx: false, cacheDir: join(packed.scratch, 'cache-dist') });
    const src = await inProcess({ index: SRC_INDEX, tsx: true, cacheDir: join(packed.scratch, 'cache-src') });
    const prism = await measurePrism();
    const express = { startup: await startups(startExpress), ...expressLoads };
    return {
      loadAverage: { before, after: loadavg()[0] ?? NaN },
      starts: STARTS,
      warmupSeconds: WARMUP_SECONDS,
      prismVersion: PRISM_VERSION,
      buildMs: packed.buildMs,
      buildWarning: packed.buildWarning,
      emulator,
      prism,
      express,
      sse,
      ratios,
      rounds: ROUNDS,
      inProcess: { dist: dist.median, distFirst: dist.first, src: src.median },
      extraCa,
    };
  } finally {
    await packed.remove();
  }
}
