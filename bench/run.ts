/**
 * `npm run bench`: first issue 16's comparison (bench/compare.ts: the packed emulator beside Prism and bare
 * Express 5, one table with the goals); then start-up time to the first 200, and requests per second of
 * GET /v1/tasks/{id} and POST /v1/tasks, next to a bare node:http server answering static JSON (the ceiling on this
 * machine); GET req/s with no fault rule loaded beside the same path without faults and the verdict
 * (bench/faults-cost.ts); callbacks past hanging receivers; store growth, the retention sweep of a grown store, and a
 * soak; a normal client's p99 while another sends 19 MB bodies (bench/large-bodies.ts); chat calls per second with
 * 1,000 text match rules loaded beside none (bench/text-matching.ts); what a session costs: its creation, the memory
 * 100 idle sessions add, GET req/s with 100 sessions beside none (bench/sessions.ts); all in one run. Every
 * server runs in its own process so the load generator does not share its event loop. Figures are printed, never
 * asserted: speed targets belong here, not in timed tests.
 *
 * `BENCH_ONLY=compare` (or a comma-separated list of compare, profile, http, faults, proxy, lifecycle, callbacks,
 * growth, soak, large-bodies, text-matching, sessions) runs only those sections; `profile` (bench/profile.ts) shows
 * where a GET's and a POST's CPU time goes, by stage, beside bare Express 5.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compare } from './compare.ts';
import { faultCost, printFaultCost } from './faults-cost.ts';
import { printComparison } from './comparison-table.ts';
import { growth, printGrowth } from './growth.ts';
import { largeBodies, printLargeBodies } from './large-bodies.ts';
import { printProfile, profileBench } from './profile.ts';
import { printProxy, proxyBench } from './proxy.ts';
import { CONNECTIONS, load, SECONDS } from './load.ts';
import type { LoadFigures } from './load.ts';
import { benchKey, emulatorCommand, json, script, startServer } from './servers.ts';
import { printSessions, sessionsBench } from './sessions.ts';
import { printTextMatching, textMatching } from './text-matching.ts';
import { concurrentStreams } from './text-streams.ts';
import type { StreamFigures } from './text-streams.ts';

const BASELINE = fileURLToPath(new URL('./baseline-server.ts', import.meta.url));
const SECTIONS = ['compare', 'profile', 'http', 'faults', 'proxy', 'lifecycle', 'callbacks', 'growth', 'soak', 'large-bodies', 'text-matching', 'sessions'] as const;
type Section = (typeof SECTIONS)[number];
const ONLY = process.env['BENCH_ONLY']?.split(',').map((s) => s.trim()).filter(Boolean) ?? [];
for (const name of ONLY) if (!(SECTIONS as readonly string[]).includes(name)) throw new Error(`BENCH_ONLY: no section ${name} (${SECTIONS.join(', ')})`);
const runs = (section: Section): boolean => ONLY.length === 0 || ONLY.includes(section);

const SUBMIT = JSON.stringify({
  model: 'social-notes-data',
  input: { mode: 'note', note: 'https://notes.example.com/n/1', agree: true },
});

const CHAT = JSON.stringify({ model: 'svc-text-pro', messages: [{ role: 'user', content: 'Hello there' }], max_tokens: 64 });

async function benchEmulator(
  label: string,
  storeArgs: string[],
  withText = false,
): Promise<{ startupMs: number; rows: LoadFigures[]; streams?: StreamFigures }> {
  const server = await startServer(emulatorCommand(storeArgs), '/_emulator/health');
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

interface LifecycleFigures {
  tasks: number;
  submitMs: number;
  driveMs: number;
  peakRssMb: number;
  unfinished: number;
}

interface CallbackFigures {
  mode: string;
  pool: number | null;
  advanceMs: number | null;
  healthyDelivered: number;
  healthyExpected: number;
  latenessP50Ms: number;
  latenessP99Ms: number;
  latenessMaxMs: number;
}

interface SoakFigures {
  perMinute: number;
  minutes: number;
  hourMs: number;
  samples: { minute: number; heapMb: number; rssMb: number; tasks: number; files: number; records: number; messages: number; jsonMb: number; storeMb: number }[];
}

const line = (name: string, value: string): string => `${name.padEnd(44)} ${value}`;

async function http(): Promise<void> {
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
    file = await benchEmulator('file store', ['--db', join(dir, 'store.db')]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }

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
}

async function lifecycle(): Promise<void> {
  const run = await script<LifecycleFigures>('lifecycle.ts');
  if (run.unfinished !== 0) throw new Error(`${run.unfinished} tasks were not terminal after 2 virtual hours`);
  console.log('');
  console.log(line(`${run.tasks} tasks: submit over HTTP (32 at a time)`, `${(run.submitMs / 1000).toFixed(1)} s`));
  console.log(line(`${run.tasks} tasks: 2 virtual hours to terminal`, `${(run.driveMs / 1000).toFixed(1)} s (120 advances of 1 min)`));
  console.log(line(`${run.tasks} tasks: peak memory (RSS)`, `${run.peakRssMb.toFixed(0)} MB`));

}

async function callbacks(): Promise<void> {
  console.log('');
  console.log('1,000 callbacks due at once, 100 of them to 10 receivers that never answer (timeout 10 s), 900 to a healthy one:');
  const callbackRuns = [
    { label: 'manual clock, one advance, default pool (256)', args: ['manual'] },
    { label: 'manual clock, one advance, --webhook-concurrency 64', args: ['manual', '64'] },
    { label: 'real clock, speed 1, default pool', args: ['real'] },
  ];
  console.log(line('', 'advance wall   healthy delivered   healthy late p50 / p99 / max'));
  for (const { label, args } of callbackRuns) {
    const c = await script<CallbackFigures>('callbacks.ts', { args });
    const advance = c.advanceMs === null ? '-' : `${(c.advanceMs / 1000).toFixed(1)} s`;
    const late = `${c.latenessP50Ms.toFixed(0)} / ${c.latenessP99Ms.toFixed(0)} / ${c.latenessMaxMs.toFixed(0)} ms`;
    console.log(line(`  ${label}`, `${advance.padStart(12)}   ${`${c.healthyDelivered}/${c.healthyExpected}`.padStart(17)}   ${late}`));
  }
}

async function growthSection(): Promise<void> {
  console.log('');
  printGrowth(await growth(), line);
}

async function soakSection(): Promise<void> {
  const soak = await script<SoakFigures>('soak.ts', { nodeFlags: ['--expose-gc'] });
  console.log('');
  console.log(
    `soak: file store, each virtual minute ${soak.perMinute} submits + ${soak.perMinute} text calls + ${soak.perMinute} reads, callbacks to a local receiver; ` +
      `${soak.minutes} virtual minutes took ${(soak.hourMs / 1000).toFixed(1)} s`,
  );
  console.log(line('  virtual time', 'heap after GC    RSS   tasks  files  records  messages   stored JSON  store file'));
  for (const s of soak.samples) {
    const when = s.minute <= soak.minutes ? `${s.minute} min` : `+31 days (sweeps ran)`;
    console.log(
      line(
        `  ${when}`,
        `${s.heapMb.toFixed(1).padStart(8)} MB ${s.rssMb.toFixed(0).padStart(5)} MB ${String(s.tasks).padStart(6)} ${String(s.files).padStart(6)} ${String(s.records).padStart(8)} ${String(s.messages).padStart(9)} ${s.jsonMb.toFixed(1).padStart(8)} MB ${s.storeMb.toFixed(1).padStart(8)} MB`,
      ),
    );
  }
}

async function main(): Promise<void> {
  if (runs('compare')) {
    printComparison(await compare());
    console.log('');
  }
  if (runs('profile')) {
    printProfile(await profileBench(), (text) => console.log(text));
    console.log('');
  }
  if (runs('http')) await http();
  if (runs('faults')) {
    console.log('');
    printFaultCost(await faultCost(), (text) => console.log(text));
  }
  if (runs('proxy')) {
    console.log('');
    printProxy(await proxyBench(), (text) => console.log(text));
  }
  if (runs('lifecycle')) await lifecycle();
  if (runs('callbacks')) await callbacks();
  if (runs('growth')) await growthSection();
  if (runs('soak')) await soakSection();
  if (runs('large-bodies')) {
    console.log('');
    printLargeBodies(await largeBodies(), (text) => console.log(text));
  }
  if (runs('text-matching')) {
    console.log('');
    printTextMatching(await textMatching(), (text) => console.log(text));
  }
  if (runs('sessions')) {
    console.log('');
    printSessions(await sessionsBench(), (text) => console.log(text));
  }
}

await main();
