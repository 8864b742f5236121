/**
 * 10,000 tasks submitted over HTTP and driven to terminal states through 2 virtual hours on the manual clock:
 * wall time of each phase and peak memory. Runs in its own process (`tsx bench/lifecycle.ts`) so its memory is
 * the emulator's, and prints one JSON line for bench/run.ts.
 */
import { createEmulator } from '../src/index.ts';
import { resolvePublic } from './servers.ts';

const TASKS = Number(process.env['BENCH_TASKS'] ?? 10_000);
const CONCURRENCY = 32;
const SCENARIOS = ['default', 'default', 'default', 'slow', 'timeout', 'no_result', 'capacity_shortage', 'cancelable'];
const MODELS = [
  { model: 'social-notes-data', input: { mode: 'note', note: 'https://notes.example.com/n/1', agree: true } },
  { model: 'video-gen-2.0-fast', input: { prompt: 'a cat on a skateboard', resolution: '480p', duration: 4 } },
  { model: 'avatar-photo', input: { image: 'https://cdn.example.com/p.jpg', audio: 'https://cdn.example.com/a.mp3' } },
];

let peakRss = 0;
const sample = (): void => {
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
};

const emulator = await createEmulator({ clock: 'manual', adminToken: 'bench', log: () => undefined, resolveHost: resolvePublic });
const base = await emulator.listen(0);
const admin = { Authorization: 'Bearer bench', 'Content-Type': 'application/json' };
const account = (await (
  await fetch(`${base}/_emulator/accounts`, { method: 'POST', headers: admin, body: JSON.stringify({ points: '999999999999.000' }) })
).json()) as { id: string };
const { key } = (await (await fetch(`${base}/_emulator/accounts/${account.id}/keys`, { method: 'POST', headers: admin, body: '{}' })).json()) as {
  key: string;
};

const submitStart = performance.now();
let next = 0;
async function worker(): Promise<void> {
  while (next < TASKS) {
    const i = next++;
    const res = await fetch(`${base}/v1/tasks`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', 'X-Emulator-Scenario': SCENARIOS[i % SCENARIOS.length] ?? 'default' },
      body: JSON.stringify(MODELS[i % MODELS.length]),
    });
    if (res.status !== 200) throw new Error(`submit ${i}: ${res.status} ${await res.text()}`);
    await res.arrayBuffer();
    if (i % 500 === 0) sample();
  }
}
await Promise.all(Array.from({ length: CONCURRENCY }, worker));
const submitMs = performance.now() - submitStart;
sample();

const driveStart = performance.now();
for (let minute = 0; minute < 120; minute++) {
  const res = await fetch(`${base}/_emulator/clock/advance`, { method: 'POST', headers: admin, body: JSON.stringify({ seconds: 60 }) });
  if (res.status !== 200) throw new Error(`advance: ${res.status}`);
  await res.arrayBuffer();
  sample();
}
const driveMs = performance.now() - driveStart;

const byStatus: Record<string, number> = {};
for (const [status, count] of emulator.internals.store.driver.prepare('SELECT status, count(*) FROM tasks GROUP BY status').all()) byStatus[String(status)] = Number(count);
const unfinished = (byStatus['queued'] ?? 0) + (byStatus['processing'] ?? 0);
await emulator.close();
console.log(
  JSON.stringify({
    tasks: TASKS,
    submitMs,
    driveMs,
    peakRssMb: Math.max(peakRss, process.resourceUsage().maxRSS * 1024) / 1048576,
    unfinished,
    byStatus,
  }),
);
