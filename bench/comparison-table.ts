/**
 * Issues 16's and 42's comparison as one plain-text table: a row per figure, a column per server (the bare SSE
 * server's streams in the Express column: both are the bare baselines), and the goal with "met" or "not met"
 * beside every figure an issue sets one for.
 */
import { availableParallelism } from 'node:os';
import { CONNECTIONS, SECONDS } from './load.ts';
import type { LoadFigures } from './load.ts';
import type { Comparison } from './compare.ts';

interface Goal {
  text: string;
  met: boolean;
}

interface Row {
  label: string;
  emulator: string;
  prism?: string;
  express?: string;
  goal?: Goal;
}

const ms = (value: number): string => `${value.toFixed(0)} ms`;
const rps = (figures: LoadFigures): string => `${figures.rps.toFixed(0)}${figures.failed > 0 ? ` (${figures.failed} failed)` : ''}`;
const latency = (figures: LoadFigures): string => `${figures.p50} / ${figures.p99} ms`;
const ratio = (a: LoadFigures, b: LoadFigures): number => a.rps / b.rps;
/** A goal on the emulator's figure: at most (`≤`) or at least (`≥`) `limit`. */
const atMost = (value: number, limit: number, unit: string): Goal => ({ text: `≤ ${limit}${unit}`, met: value <= limit });
const atLeast = (value: number, limit: number, unit: string): Goal => ({ text: `≥ ${limit}${unit}`, met: value >= limit });

export function comparisonRows(c: Comparison): Row[] {
  const { emulator: e, prism: p, express: x } = c;
  const { dist, distFirst, src } = c.inProcess;
  const getVsPrism = ratio(e.get, p.get);
  // Against the baselines: the median of the alternated rounds' own ratios, not a ratio of the rounds together.
  const { get: getVsExpress, post: postVsExpress, ttfbP50: p50VsSse, ttfbP99: p99VsSse } = c.ratios;
  const { sse } = c;
  const restartRatio = e.restart.fullMs / e.restart.emptyMs;
  return [
    {
      label: `start-up, spawn → first 200 (median of ${c.starts})`,
      emulator: ms(e.startup.medianMs),
      prism: ms(p.startup.medianMs),
      express: `${ms(x.startup.medianMs)} (tsx)`,
      goal: atMost(e.startup.medianMs, 300, ' ms'),
    },
    { label: 'start-up, first (empty cache)', emulator: ms(e.startup.firstMs), goal: atMost(e.startup.firstMs, 300, ' ms') },
    ...(c.extraCa
      ? [
          { label: 'start-up without NODE_EXTRA_CA_CERTS (median)', emulator: ms(c.extraCa.startWithoutMs) },
          { label: 'node -e 0, with / without NODE_EXTRA_CA_CERTS', emulator: `${ms(c.extraCa.bootWithMs)} / ${ms(c.extraCa.bootWithoutMs)}` },
        ]
      : []),
    { label: 'in-process: node boot (dist / src via tsx)', emulator: `${ms(dist.bootMs)} / ${ms(src.bootMs)}` },
    { label: 'in-process: import (dist / src via tsx)', emulator: `${ms(dist.importMs)} / ${ms(src.importMs)}` },
    { label: 'in-process: createEmulator(), dist', emulator: ms(dist.createMs), goal: atMost(dist.createMs, 100, ' ms') },
    { label: 'in-process: createEmulator(), dist, empty cache', emulator: ms(distFirst.createMs), goal: atMost(distFirst.createMs, 100, ' ms') },
    { label: 'in-process: createEmulator(), src via tsx', emulator: ms(src.createMs), goal: atMost(src.createMs, 100, ' ms') },
    { label: 'in-process: listen → first 200 (dist / src)', emulator: `${ms(dist.firstOkMs)} / ${ms(src.firstOkMs)}` },
    { label: 'GET /v1/tasks/{id}: req/s', emulator: rps(e.get), prism: rps(p.get), express: rps(x.get) },
    { label: 'GET /v1/tasks/{id}: latency p50 / p99', emulator: latency(e.get), prism: latency(p.get), express: latency(x.get) },
    { label: 'GET req/s: emulator ÷ Prism', emulator: `${getVsPrism.toFixed(2)}×`, goal: atLeast(getVsPrism, 2, '×') },
    { label: `GET req/s: emulator ÷ Express (median of ${c.rounds} rounds)`, emulator: `${getVsExpress.toFixed(2)}×`, goal: atLeast(getVsExpress, 0.8, '×') },
    { label: 'POST /v1/tasks: req/s', emulator: rps(e.post), prism: rps(p.post), express: rps(x.post) },
    { label: 'POST /v1/tasks: latency p50 / p99', emulator: latency(e.post), prism: latency(p.post), express: latency(x.post) },
    { label: 'POST req/s: emulator ÷ Prism', emulator: `${ratio(e.post, p.post).toFixed(2)}×` },
    { label: `POST req/s: emulator ÷ Express (median of ${c.rounds} rounds)`, emulator: `${postVsExpress.toFixed(2)}×`, goal: atLeast(postVsExpress, 0.35, '×') },
    { label: `${e.streams.streams} streams of 500 tokens: first byte p50 (bare SSE server)`, emulator: ms(e.streams.ttfbP50Ms), prism: 'n/a', express: ms(sse.ttfbP50Ms) },
    { label: `${e.streams.streams} streams of 500 tokens: first byte p99 (bare SSE server)`, emulator: ms(e.streams.ttfbP99Ms), prism: 'n/a', express: ms(sse.ttfbP99Ms) },
    { label: `streams first byte p50: emulator ÷ bare SSE (median of ${c.rounds})`, emulator: `${p50VsSse.toFixed(2)}×`, goal: atMost(p50VsSse, 1.25, '×') },
    { label: `streams first byte p99: emulator ÷ bare SSE (median of ${c.rounds})`, emulator: `${p99VsSse.toFixed(2)}×`, goal: atMost(p99VsSse, 1.25, '×') },
    { label: `${e.streams.streams} streams of 500 tokens: total (bare SSE server)`, emulator: `${(e.streams.totalMs / 1000).toFixed(2)} s`, prism: 'n/a', express: `${(sse.totalMs / 1000).toFixed(2)} s` },
    { label: 'RSS after 8 s of GET and POST load', emulator: `${e.rssMb.toFixed(0)} MiB`, goal: atMost(e.rssMb, 180, ' MiB') },
    { label: `restart: empty store / ${e.restart.tasks.toLocaleString('en')} queued tasks (median of 5)`, emulator: `${ms(e.restart.emptyMs)} / ${ms(e.restart.fullMs)}` },
    { label: 'restart of the full queue ÷ the empty store', emulator: `${restartRatio.toFixed(2)}×`, goal: atMost(restartRatio, 1.2, '×') },
  ];
}

export function printComparison(c: Comparison): void {
  const rows = comparisonRows(c);
  const header: Row = { label: '', emulator: 'emulator', prism: 'Prism', express: 'Express 5', goal: { text: 'goal', met: true } };
  const width = (pick: (row: Row) => string): number => Math.max(...[header, ...rows].map((row) => pick(row).length));
  const w = {
    label: width((r) => r.label),
    emulator: width((r) => r.emulator),
    prism: width((r) => r.prism ?? ''),
    express: width((r) => r.express ?? ''),
    goal: width((r) => r.goal?.text ?? ''),
  };
  const line = (row: Row, verdict: string): string =>
    [
      row.label.padEnd(w.label),
      row.emulator.padStart(w.emulator),
      (row.prism ?? '').padStart(w.prism),
      (row.express ?? '').padStart(w.express),
      (row.goal?.text ?? '').padEnd(w.goal),
      verdict,
    ]
      .join('   ')
      .trimEnd();
  console.log(
    [
      `issues 16 and 42: the emulator as packed (npm run build in a temporary copy; --memory) beside Prism ${c.prismVersion} (mock of`,
      `openapi/service.yaml, -v silent), a bare Express 5 hello-world and a bare node:http SSE server sending the emulator's own`,
      `events (its streams in the Express column). Start-ups: median of ${c.starts}, the emulator's first`,
      `with an empty derived-data cache; in-process: fresh processes. Load: ${CONNECTIONS} connections, ${SECONDS} s per run after`,
      `${c.warmupSeconds} s of warm-up (the emulator's and Express's in ${c.rounds} alternated rounds, as are the streams), non-2xx`,
      `counted as failed. node ${process.version}, ${availableParallelism()} cores, load average`,
      `${c.loadAverage.before.toFixed(1)} before and ${c.loadAverage.after.toFixed(1)} after (other work on the machine moves every figure).`,
    ].join('\n'),
  );
  if (c.buildWarning) console.log(`  (npm run build in the copy reported: ${c.buildWarning})`);
  if (c.extraCa) {
    console.log(`  NODE_EXTRA_CA_CERTS is set (${c.extraCa.file}): node reads it while it boots, in every start of this table; the two rows`);
    console.log('  after the first start show its share (informational: the start-up goal is judged on the start as this environment gives it).');
  }
  console.log('');
  console.log(line(header, 'verdict'));
  for (const row of rows) console.log(line(row, row.goal ? (row.goal.met ? 'met' : 'not met') : ''));
  const failed = [c.emulator, c.prism, c.express].some((s) => s.get.failed + s.post.failed > 0);
  if (failed) console.log('  some requests failed: their req/s count only the 2xx answers');
}
