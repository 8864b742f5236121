/**
 * Builds a grown file store for the growth bench: real entries made by a real emulator (tasks of every model
 * and several outcomes, text calls, their call records, ledger entries and callback messages), then copied
 * under fresh ids until the store holds TASKS tasks and RECORDS call records, written as a snapshot by the
 * store's own writer. Run alone: `tsx bench/grow-store.ts <path> [tasks] [records]`; prints one JSON line.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEmulator } from '../src/index.ts';
import { compactTime, formatTime, parseTime } from '../src/clock/index.ts';
import type { StoreData } from '../src/store/index.ts';
import { writeSnapshot } from '../src/store/log-file.ts';

const [path, tasksArg, recordsArg] = process.argv.slice(2);
if (!path) throw new Error('usage: tsx bench/grow-store.ts <path> [tasks] [records]');
const TASKS = Number(tasksArg ?? 100_000);
const RECORDS = Number(recordsArg ?? 1_000_000);
const DAY = 24 * 3600 * 1000;

/** Samples: what a real emulator stores for a mix of work. */
async function samples(): Promise<StoreData> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-grow-'));
  const emulator = await createEmulator({ clock: 'manual', adminToken: 'grow', log: () => undefined, db: join(dir, 'db.json') });
  try {
    const base = await emulator.listen(0);
    const auth = { Authorization: 'Bearer sk-emulator-demo', 'Content-Type': 'application/json' };
    const bodies = [
      { model: 'social-notes-data', input: { mode: 'note', note: 'https://notes.example.com/n/1', agree: true } },
      { model: 'video-gen-2.0-fast', input: { prompt: 'a cat on a skateboard', resolution: '480p', duration: 4 } },
      { model: 'avatar-photo', input: { image: 'https://cdn.example.com/p.jpg', audio: 'https://cdn.example.com/a.mp3' } },
    ];
    for (const scenario of ['default', 'instant', 'timeout', 'capacity_shortage', 'cancelable']) {
      for (const body of bodies) {
        const res = await fetch(`${base}/v1/tasks`, { method: 'POST', headers: { ...auth, 'X-Emulator-Scenario': scenario }, body: JSON.stringify(body) });
        if (res.status !== 200) throw new Error(`sample submit: ${res.status} ${await res.text()}`);
      }
    }
    for (let i = 0; i < 5; i += 1) {
      const res = await fetch(`${base}/v1/chat/completions`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ model: 'svc-text-pro', messages: [{ role: 'user', content: `Hello ${i}` }], max_tokens: 64 }),
      });
      await res.arrayBuffer();
    }
    await fetch(`${base}/_emulator/clock/advance`, { method: 'POST', headers: { Authorization: 'Bearer grow', 'Content-Type': 'application/json' }, body: '{"seconds":7200}' });
    return JSON.parse(JSON.stringify(emulator.store.data)) as StoreData;
  } finally {
    await emulator.close();
    await rm(dir, { recursive: true, force: true });
  }
}

const sample = await samples();
const nowMs = sample.clock_ms ?? parseTime(Object.values(sample.calls)[0]?.at ?? '');
const grown: StoreData = { ...sample, tasks: {}, calls: {}, ledger: [], idempotency: {} };
const taskSamples = Object.values(sample.tasks).filter((t) => t.task.status !== 'queued' && t.task.status !== 'processing');
const callSamples = Object.values(sample.calls);
const ledgerSamples = sample.ledger;
const pad = (n: number, width: number): string => String(n).padStart(width, '0');

// Tasks: spread over the last 29 days, terminal (a grown instance's old tasks are done), each with its ledger
// entries; every tenth with an Idempotency-Key.
for (let i = 0; i < TASKS; i += 1) {
  const from = taskSamples[i % taskSamples.length];
  if (!from) throw new Error('no task samples');
  const createdMs = nowMs - 29 * DAY + Math.floor((i / TASKS) * 28 * DAY);
  const id = `T${compactTime(createdMs)}${pad(i, 6)}`;
  grown.seq += 1;
  grown.tasks[id] = { ...from, seq: grown.seq, created_ms: createdMs, task: { ...from.task, id, created_at: formatTime(createdMs) } };
  if (i % 10 === 0) grown.idempotency[`${from.account_id} grow-${i}`] = { task_id: id, model: from.task.model, input: '{}' };
  for (let j = 0; j < 2; j += 1) {
    const entry = ledgerSamples[(2 * i + j) % ledgerSamples.length];
    if (entry) grown.ledger.push({ ...entry, id: grown.ledger.length + 1 });
  }
}
// Call records: arrival order, over the last 29 days.
for (let i = 0; i < RECORDS; i += 1) {
  const from = callSamples[i % callSamples.length];
  if (!from) throw new Error('no call samples');
  const id = `req_grow${pad(i, 20)}`;
  grown.calls[id] = { ...from, request_id: id, at: formatTime(nowMs - 29 * DAY + Math.floor((i / RECORDS) * 28 * DAY)) };
}
// The sample's accounts keep their balances: the copies stand for history, not for points in play.
const snapshot = await writeSnapshot(path, 1, () => grown);
await snapshot.install();
console.log(JSON.stringify({ tasks: Object.keys(grown.tasks).length, records: Object.keys(grown.calls).length, ledger: grown.ledger.length, bytes: snapshot.bytes }));
