/**
 * Where a request's time goes (issue 42): the emulator started with `--cpu-prof` (memory store, quiet), one
 * load of GET /v1/tasks/{id} or POST /v1/tasks, then a clean stop so node writes the profile; its samples are
 * summed by the stage of the request each function belongs to (by file, the few functions node and V8 run
 * themselves by name). Printed as a table of CPU shares; `BENCH_ONLY=profile`.
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { load } from './load.ts';
import { benchKey, emulatorCommand, json, startServer } from './servers.ts';
import { concurrentStreams } from './text-streams.ts';

interface CallFrame {
  functionName: string;
  url: string;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  /** Microseconds on the machine's monotonic clock, which `process.hrtime` reads too. */
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Microseconds on the monotonic clock the profile's times are on. */
const nowUs = (): number => Number(process.hrtime.bigint() / 1000n);

/** The stages of a request, each named by the files (or node's own functions) that do its work; the first match wins. */
const STAGES: [stage: string, matches: (frame: CallFrame) => boolean][] = [
  ['idle (waiting for the network)', (f) => f.functionName === '(idle)'],
  ['garbage collection', (f) => f.functionName === '(garbage collector)'],
  ['call record', (f) => /\/src\/(calls\/|http\/call-records|http\/call-bodies)/.test(f.url)],
  ['client log (verdict)', (f) => /\/src\/(verdict\/|http\/client-log)/.test(f.url)],
  ['logging', (f) => /\/src\/(log\/|http\/request-log)/.test(f.url)],
  ['key lookup and admission', (f) => /\/src\/(keys\/|accounts\/|http\/(api-key|key-checks|rate|fault-step))|\/src\/faults\//.test(f.url)],
  ['validation (ajv)', (f) => /\/src\/contract\/|ajv/.test(f.url)],
  ['store: SQLite and its statements', (f) => /\/src\/(store\/|db\.ts)|libsql/.test(f.url)],
  ['tasks, billing, scenarios', (f) => /\/src\/(tasks|billing|points|scenarios|service|models|results)\//.test(f.url)],
  ['serialization (JSON)', (f) => /^(stringify|parse)$/.test(f.functionName) && f.url === '' ],
  ['request id, context, other src/http', (f) => /\/src\/(http|random|clock|wire|errors)\//.test(f.url)],
  ['express and its router', (f) => /node_modules\/(express|router|body-parser|finalhandler|send|on-finished|content-type|type-is|mime|qs|depd|debug|path-to-regexp|encodeurl|escape-html|parseurl|proxy-addr|etag|fresh|range-parser|statuses|vary|accepts|negotiator|cookie)/.test(f.url)],
  ['node: HTTP parsing, sockets, streams', (f) => /^node:/.test(f.url)],
  ['other emulator code', (f) => /\/src\//.test(f.url)],
  ['other (V8, natives, program)', () => true],
];

export interface StageShare {
  stage: string;
  /** Share of the samples that were not idle, in per cent. */
  percent: number;
  /** CPU microseconds per request answered. */
  usPerRequest: number;
}

export interface ProfileFigures {
  name: string;
  rps: number;
  /** CPU (not idle) microseconds per request, all stages. */
  usPerRequest: number;
  stages: StageShare[];
  /** The functions with the most samples of their own, with their share (printed with BENCH_PROFILE_TOP=1). */
  top: [string, number][];
}

/** The samples taken within `window` (the measured load: not the start, the warm-up or the stop), by stage. */
function stagesOf(profile: CpuProfile, requests: number, window: [number, number]): { usPerRequest: number; stages: StageShare[]; top: [string, number][] } {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const time = new Map<string, number>();
  const own = new Map<string, number>();
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i] ?? 0;
    if (at < window[0] || at > window[1]) continue;
    const node = byId.get(profile.samples[i] as number);
    if (!node) continue;
    const name = `${node.callFrame.functionName || '(anonymous)'} ${node.callFrame.url.replace(/^.*\/(node_modules|src)\//, '$1/')}`;
    own.set(name, (own.get(name) ?? 0) + (profile.timeDeltas[i] ?? 0));
    const stage = STAGES.find(([, matches]) => matches(node.callFrame))?.[0] ?? 'other';
    time.set(stage, (time.get(stage) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const busy = [...time].filter(([stage]) => !stage.startsWith('idle')).reduce((sum, [, us]) => sum + us, 0);
  const stages = [...time]
    .filter(([stage]) => !stage.startsWith('idle'))
    .map(([stage, us]) => ({ stage, percent: (us / busy) * 100, usPerRequest: us / requests }))
    .sort((a, b) => b.percent - a.percent);
  const top = [...own].filter(([name]) => !name.startsWith('(idle)')).sort((a, b) => b[1] - a[1]).slice(0, 25).map(([name, us]): [string, number] => [name, (us / busy) * 100]);
  return { usPerRequest: busy / requests, stages, top };
}

const SUBMIT = JSON.stringify({ model: 'social-notes-data', input: { mode: 'note', note: 'https://notes.example.com/n/1', agree: true } });

const BASELINE = fileURLToPath(new URL('./baseline-server.ts', import.meta.url));
const ANY_TASK = 'T261123090000ABCDEF';

/** One profiled run of one request kind, in a fresh emulator (or the bare Express 5 baseline, the framework's own cost). */
async function profiled(kind: 'GET' | 'POST' | 'STREAMS', server: 'emulator' | 'express', bin: string | undefined): Promise<ProfileFigures> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-profile-'));
  const flags = ['--cpu-prof', '--cpu-prof-dir', dir];
  const started =
    server === 'emulator'
      ? await startServer([...flags, ...emulatorCommand(['--memory'], bin)], '/_emulator/health')
      : await startServer([...flags, '--import', 'tsx', BASELINE, 'express'], `/v1/tasks/${ANY_TASK}`);
  try {
    const key = server === 'emulator' ? await benchKey(started.base) : 'none';
    const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
    const task = server === 'emulator' ? String((await json(`${started.base}/v1/tasks`, { method: 'POST', headers, body: SUBMIT }))['id']) : ANY_TASK;
    const target =
      kind === 'GET' ? { url: `${started.base}/v1/tasks/${task}`, headers } : { url: `${started.base}/v1/tasks`, method: 'POST' as const, headers, body: SUBMIT };
    let figures: { rps: number; requests: number };
    let window: [number, number];
    if (kind === 'STREAMS') {
      // concurrentStreams runs a round of warm-up itself; the window holds both rounds.
      const from = nowUs();
      const streams = await concurrentStreams(started.base, key);
      window = [from, nowUs()];
      figures = { rps: streams.streams / (streams.totalMs / 1000), requests: streams.streams * 2 };
    } else {
      await load(`${kind} (warm-up)`, target, {});
      const from = nowUs();
      figures = await load(`${kind} (profiled)`, target);
      window = [from, nowUs()];
    }
    const exited = new Promise((resolve) => started.child.once('exit', resolve));
    started.child.kill('SIGTERM');
    await exited;
    const [file] = (await readdir(dir)).filter((name) => name.endsWith('.cpuprofile'));
    if (!file) throw new Error('the emulator wrote no CPU profile');
    const text = await readFile(join(dir, file), 'utf8');
    // BENCH_PROFILE_KEEP=DIR keeps each profile (for DevTools, or a look at callers and inclusive times).
    const keep = process.env['BENCH_PROFILE_KEEP'];
    if (keep) await writeFile(join(keep, `${kind}-${server}.cpuprofile`), text);
    const profile = JSON.parse(text) as CpuProfile;
    // The warm-up, the set-up calls and the stop are in the profile too: a few hundred requests of many thousands.
    return { name: `${kind} ${server}`, rps: figures.rps, ...stagesOf(profile, figures.requests, window) };
  } finally {
    started.child.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  }
}

export async function profileBench(bin?: string): Promise<ProfileFigures[]> {
  if (process.env['BENCH_PROFILE_STREAMS'] === '1') return [await profiled('STREAMS', 'emulator', bin)];
  return [await profiled('GET', 'emulator', bin), await profiled('GET', 'express', bin), await profiled('POST', 'emulator', bin), await profiled('POST', 'express', bin)];
}

export function printProfile(figures: ProfileFigures[], print: (text: string) => void): void {
  print('where a request\'s CPU time goes (node --cpu-prof under the load, memory store; shares of the busy samples):');
  for (const f of figures) {
    print(`  ${f.name.replace('GET', 'GET /v1/tasks/{id},').replace('POST', 'POST /v1/tasks,')}: ${f.rps.toFixed(0)} req/s profiled, ${f.usPerRequest.toFixed(0)} µs of CPU a request`);
    for (const s of f.stages) print(`    ${s.stage.padEnd(40)} ${s.percent.toFixed(1).padStart(5)} %  ${s.usPerRequest.toFixed(1).padStart(6)} µs`);
    if (process.env['BENCH_PROFILE_TOP'] === '1') for (const [name, percent] of f.top) print(`      ${percent.toFixed(1).padStart(5)} %  ${name}`);
  }
}
