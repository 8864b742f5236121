/**
 * The retention sweep of a grown store, timed inside the emulator's own process: an emulator on a manual clock
 * over a store whose call records are all past the 30-day retention (bench/grow-store.ts --records-age-days), one
 * advance of ADVANCE_HOURS over HTTP (the first hourly sweep falls due in it and deletes every record), and
 * meanwhile the event loop's delay (perf_hooks.monitorEventLoopDelay) and the latency of a GET /v1/tasks/{id}
 * sent every 10 ms. The advance answers once the work it started has settled, so its wall time is the sweep's.
 *
 * The store is checked before it opens (not in the background as a store this large would be), so the check's
 * worker does not share the machine with the sweep. Run alone: `tsx bench/sweep.ts <path> [hours]`; prints one
 * JSON line.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createEmulator } from '../src/index.ts';

const [path, hoursArg] = process.argv.slice(2);
if (!path) throw new Error('usage: tsx bench/sweep.ts <path> [hours]');
const ADVANCE_HOURS = Number(hoursArg ?? 1);
const PROBE_EVERY_MS = 10;

const emulator = await createEmulator({
  db: path,
  clock: 'manual',
  adminToken: 'bench',
  log: (message) => console.error(message),
  // The sweep's pauses alone: no store check in a worker beside it.
  storeCheck: false,
});
const count = (): number => Number(emulator.internals.store.driver.prepare('SELECT count(*) FROM calls').get()?.[0] ?? 0);
try {
  const base = await emulator.listen(0);
  const auth = { Authorization: 'Bearer sk-emulator-demo' };
  const admin = { Authorization: 'Bearer bench', 'Content-Type': 'application/json' };
  const before = count();
  const task = String(emulator.internals.store.driver.prepare('SELECT id FROM tasks ORDER BY seq DESC LIMIT 1').get()?.[0]);

  const probes: Promise<number>[] = [];
  const probe = async (): Promise<number> => {
    const sent = performance.now();
    const res = await fetch(`${base}/v1/tasks/${task}`, { headers: auth });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`probe: ${res.status}`);
    return performance.now() - sent;
  };
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const timer = setInterval(() => probes.push(probe()), PROBE_EVERY_MS);
  const started = performance.now();
  const res = await fetch(`${base}/_emulator/clock/advance`, { method: 'POST', headers: admin, body: JSON.stringify({ seconds: ADVANCE_HOURS * 3600 + 60 }) });
  if (res.status !== 200) throw new Error(`advance: ${res.status} ${await res.text()}`);
  await res.arrayBuffer();
  const sweepMs = performance.now() - started;
  clearInterval(timer);
  delay.disable();
  const latencies = (await Promise.all(probes)).sort((a, b) => a - b);
  const pick = (q: number): number => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
  console.log(
    JSON.stringify({
      hours: ADVANCE_HOURS,
      before,
      // Every probe left a call record of its own, made after the sweep's cutoff.
      after: count() - latencies.length,
      sweepMs,
      loopMaxMs: delay.max / 1e6,
      loopP99Ms: delay.percentile(99) / 1e6,
      probes: latencies.length,
      probeP50Ms: pick(0.5),
      probeP99Ms: pick(0.99),
      probeMaxMs: latencies.at(-1) ?? NaN,
    }),
  );
} finally {
  await emulator.close();
}
