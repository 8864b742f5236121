/**
 * A 1-hour virtual soak: every virtual minute, task submits (every model, a mix of outcomes), text calls and
 * task reads over HTTP against a file-backed emulator with callbacks to a local receiver, then the clock moves a
 * minute. Memory is sampled after a full GC every 15 virtual minutes; then the clock jumps 31 days so the sweeps
 * run (call records after 30 days, finished callback messages after 30 days, files at their expiry) and memory
 * is sampled once more. Runs alone (`node --expose-gc --import tsx bench/soak.ts`) and prints one JSON line.
 */
import { existsSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEmulator } from '../src/index.ts';

const PER_MINUTE = Number(process.env['BENCH_SOAK_PER_MINUTE'] ?? 60);
// BENCH_SOAK_MINUTES=180 runs past the client log's bound (10,000 requests), where memory must stop growing.
const MINUTES = Number(process.env['BENCH_SOAK_MINUTES'] ?? 60);
const SCENARIOS = ['default', 'instant', 'slow', 'timeout', 'no_result', 'cancelable'];
const BODIES = [
  { model: 'social-notes-data', input: { mode: 'note', note: 'https://notes.example.com/n/1', agree: true } },
  { model: 'video-gen-2.0-fast', input: { prompt: 'a cat on a skateboard', resolution: '480p', duration: 4 } },
  { model: 'avatar-photo', input: { image: 'https://cdn.example.com/p.jpg', audio: 'https://cdn.example.com/a.mp3' } },
];

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

const receiver = createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200).end('ok'));
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

const dir = await mkdtemp(join(tmpdir(), 'svc-soak-'));
const path = join(dir, 'store.db');
const emulator = await createEmulator({
  clock: 'manual',
  adminToken: 'soak',
  log: () => undefined,
  db: path,
  allowInsecureWebhooks: true,
  // Result files live 10 minutes, so expiry runs many times within the hour.
  fileRetentionSeconds: 600,
});
const base = await emulator.listen(0);
const admin = { Authorization: 'Bearer soak', 'Content-Type': 'application/json' };
const post = async (path: string, body: unknown, headers: Record<string, string>): Promise<Record<string, unknown>> => {
  const res = await fetch(`${base}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
};
const account = await post('/_emulator/accounts', { points: '999999999999.000' }, admin);
await post(`/_emulator/accounts/${String(account['id'])}/webhook`, { url: hook }, admin);
const { key } = (await post(`/_emulator/accounts/${String(account['id'])}/keys`, {}, admin)) as { key: string };
const auth = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };

interface Sample {
  minute: number;
  heapMb: number;
  rssMb: number;
  tasks: number;
  files: number;
  records: number;
  messages: number;
  /** The stored records' JSON, for comparison with the heap. */
  jsonMb: number;
  /** The SQLite file and its write-ahead log. */
  storeMb: number;
}
const samples: Sample[] = [];
const fileMb = (file: string): number => (existsSync(file) ? statSync(file).size / 1048576 : 0);
/**
 * The records' JSON as stored, summed by SQLite: exporting the state to measure it (as this bench once did) put
 * the whole store in the heap at every sample, and the process kept the memory that took, which the next sample's
 * RSS then showed as growth.
 */
const storedJsonBytes = (): number =>
  ['accounts', 'keys', 'tasks', 'ledger', 'files', 'deliveries', 'calls', 'scenarios']
    .map((table) => Number(emulator.internals.store.driver.prepare(`SELECT coalesce(sum(length(body)), 0) FROM ${table}`).get()?.[0] ?? 0))
    .reduce((sum, bytes) => sum + bytes, 0);
const sample = (minute: number): void => {
  // Memory first, right after a full GC: what follows reads the whole store into the heap.
  gc();
  const memory = process.memoryUsage();
  const count = (table: string): number => Number(emulator.internals.store.driver.prepare(`SELECT count(*) FROM ${table}`).get()?.[0] ?? 0);
  samples.push({
    minute,
    heapMb: memory.heapUsed / 1048576,
    rssMb: memory.rss / 1048576,
    tasks: count('tasks'),
    files: count('files'),
    records: count('calls'),
    messages: count('deliveries'),
    jsonMb: storedJsonBytes() / 1048576,
    storeMb: fileMb(path) + fileMb(`${path}-wal`),
  });
};

const started = performance.now();
sample(0);
let n = 0;
for (let minute = 1; minute <= MINUTES; minute += 1) {
  const ids: string[] = [];
  await Promise.all(
    Array.from({ length: PER_MINUTE }, async () => {
      const i = n++;
      const task = await post('/v1/tasks', BODIES[i % BODIES.length], { ...auth, 'X-Emulator-Scenario': SCENARIOS[i % SCENARIOS.length] ?? 'default' });
      ids.push(String(task['id']));
      const chat = await fetch(`${base}/v1/chat/completions`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ model: 'svc-text-pro', messages: [{ role: 'user', content: `Hello ${i}` }], max_tokens: 32, stream: i % 2 === 0 }),
      });
      await chat.arrayBuffer();
    }),
  );
  for (const id of ids) await (await fetch(`${base}/v1/tasks/${id}`, { headers: auth })).arrayBuffer();
  await post('/_emulator/clock/advance', { seconds: 60 }, admin);
  if (minute % 15 === 0) sample(minute);
}
const hourMs = performance.now() - started;
// 31 days in steps of a day, so the hourly sweeps, file expiries and retries all run.
for (let day = 0; day < 31; day += 1) await post('/_emulator/clock/advance', { seconds: 86_400 }, admin);
sample(MINUTES + 31 * 24 * 60);

await emulator.close();
receiver.close();
await rm(dir, { recursive: true, force: true });
console.log(JSON.stringify({ perMinute: PER_MINUTE, minutes: MINUTES, hourMs, samples }));
