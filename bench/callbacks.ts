/**
 * Callbacks past hanging receivers: 1,000 tasks end together, 100 of them calling back receivers that never
 * answer (10 of them, 10 messages each) and 900 calling back a healthy one. On the manual clock it times the one
 * advance that ends them (which waits for the hanging sends' 10 s timeout) and how late each healthy callback
 * reached its receiver after the advance began; on the real clock (speed 1) how late each healthy callback came
 * after the moment its task ended. Runs in its own process (`tsx bench/callbacks.ts manual|real [pool]`) and
 * prints one JSON line for bench/run.ts.
 */
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createEmulator } from '../src/index.ts';

const TASKS = 1000;
const HANGING_TASKS = 100;
const HANGING_RECEIVERS = 10;
const [mode = 'manual', poolArg] = process.argv.slice(2) as ['manual' | 'real', string | undefined];

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
}

const arrivals = new Map<string, number>();
const healthy = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    arrivals.set(String(req.headers['webhook-id']), performance.now());
    res.writeHead(200).end('ok');
  });
});
const hanging = Array.from({ length: HANGING_RECEIVERS }, () => createServer((req) => req.resume()));
const healthyUrl = await listen(healthy);
const hangingUrls = await Promise.all(hanging.map(listen));

const emulator = await createEmulator({
  clock: mode,
  adminToken: 'bench',
  allowInsecureWebhooks: true,
  log: () => undefined,
  ...(poolArg ? { webhookConcurrency: Number(poolArg) } : {}),
});
const base = await emulator.listen(0);
const admin = { Authorization: 'Bearer bench', 'Content-Type': 'application/json' };
const account = (await (
  await fetch(`${base}/_emulator/accounts`, { method: 'POST', headers: admin, body: JSON.stringify({ points: '999999999999.000' }) })
).json()) as { id: string };
const { key } = (await (await fetch(`${base}/_emulator/accounts/${account.id}/keys`, { method: 'POST', headers: admin, body: '{}' })).json()) as { key: string };

/** Every tenth task calls back a hanging receiver; the others the healthy one. Returns task id → its due wall time. */
const dueAt = new Map<string, number>();
let next = 0;
async function worker(): Promise<void> {
  while (next < TASKS) {
    const i = next++;
    const url = i % (TASKS / HANGING_TASKS) === 0 ? (hangingUrls[i % HANGING_RECEIVERS] as string) : healthyUrl;
    const submitted = performance.now();
    const res = await fetch(`${base}/v1/tasks`, {
      method: 'POST',
      // The default scenario: 1 s queued, 8 s processing.
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ model: 'social-notes-data', input: { mode: 'note', note: `https://notes.example.com/n/${i}`, agree: true }, webhook_url: url }),
    });
    const task = (await res.json()) as { id: string };
    if (res.status !== 200) throw new Error(`submit ${i}: ${res.status}`);
    if (url === healthyUrl) dueAt.set(task.id, submitted + 9000);
  }
}
await Promise.all(Array.from({ length: 32 }, worker));

let advanceMs: number | null = null;
const begun = performance.now();
if (mode === 'manual') {
  const res = await fetch(`${base}/_emulator/clock/advance`, { method: 'POST', headers: admin, body: JSON.stringify({ seconds: 9 }) });
  if (res.status !== 200) throw new Error(`advance: ${res.status}`);
  advanceMs = performance.now() - begun;
}
// Wait for every healthy callback (at most a minute of real time).
const messageOfTask = (): Map<string, string> =>
  new Map(emulator.internals.store.driver.prepare('SELECT id, task_id FROM deliveries').all().map(([id, task]) => [String(id), String(task ?? '')]));
for (const deadline = performance.now() + 60_000; arrivals.size < TASKS - HANGING_TASKS && performance.now() < deadline; ) {
  await new Promise((resolve) => setTimeout(resolve, 20));
}
const tasksByMessage = messageOfTask();
const lateness = [...arrivals].map(([messageId, at]) => {
  const due = mode === 'manual' ? begun : (dueAt.get(tasksByMessage.get(messageId) ?? '') ?? at);
  return Math.max(0, at - due);
});
lateness.sort((a, b) => a - b);
const pick = (q: number): number => lateness[Math.min(lateness.length - 1, Math.floor(q * lateness.length))] ?? NaN;

await Promise.all([...hanging, healthy].map((s) => (s.closeAllConnections(), new Promise((resolve) => s.close(resolve)))));
await emulator.close();
console.log(
  JSON.stringify({
    mode,
    pool: poolArg ? Number(poolArg) : null,
    advanceMs,
    healthyDelivered: arrivals.size,
    healthyExpected: TASKS - HANGING_TASKS,
    latenessP50Ms: pick(0.5),
    latenessP99Ms: pick(0.99),
    latenessMaxMs: lateness.at(-1) ?? NaN,
  }),
);
