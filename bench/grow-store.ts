/**
 * Builds a grown SQLite store for the growth and sweep benches, straight into the store file: real records made
 * by a real emulator (tasks of every model and several outcomes with their ledger entries, text calls and their
 * call records), imported as they are, then copied under fresh ids in large transactions (tasks and ledger
 * entries through the repositories, call records by SQL from the samples) until the store holds TASKS tasks and
 * RECORDS call records.
 *
 * The copies keep the store sound: each copied task brings its own ledger entries under the new task id, each
 * account is funded once for what its copies charged (so available stays what the samples left), and its
 * balances are written from the ledger's sums, so the store check finds nothing to report.
 *
 * Run alone: `tsx bench/grow-store.ts <path> [tasks] [records] [--records-age-days OLDEST:NEWEST] [--unfinished]`;
 * prints one JSON line. Tasks are spread over the last 29 days; call records over OLDEST to NEWEST days before
 * the store's clock (default 29:1; e.g. 59:31 for records that are all past the 30-day retention). With
 * `--unfinished` every task is a copy of a queued one, made in the last minute (a restart schedules them all).
 */
import { statSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { createEmulator } from '../src/index.ts';
import { compactTime, formatTime } from '../src/clock/index.ts';
import { repositories } from '../src/db.ts';
import type { Db } from '../src/db.ts';
import type { LedgerEntry } from '../src/billing/index.ts';
import type { StoredTask } from '../src/tasks/index.ts';
import { exportState, importState } from '../src/state/index.ts';
import type { StateDocument } from '../src/state/index.ts';
import { openStore } from '../src/store/index.ts';
import { resolvePublic } from './servers.ts';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { 'records-age-days': { type: 'string', default: '29:1' }, unfinished: { type: 'boolean', default: false } },
});
const [path, tasksArg, recordsArg] = positionals;
if (!path) throw new Error('usage: tsx bench/grow-store.ts <path> [tasks] [records] [--records-age-days OLDEST:NEWEST]');
const TASKS = Number(tasksArg ?? 100_000);
const RECORDS = Number(recordsArg ?? 1_000_000);
const [OLDEST_DAYS, NEWEST_DAYS] = (values['records-age-days'] ?? '').split(':').map(Number) as [number, number];
if (!(OLDEST_DAYS >= NEWEST_DAYS && NEWEST_DAYS >= 0)) throw new Error('--records-age-days OLDEST:NEWEST, OLDEST >= NEWEST >= 0');
const DAY = 24 * 3600 * 1000;
/** formatTime's offset: call record times are Beijing time, whole seconds. */
const BEIJING_MS = 8 * 3600 * 1000;
/** Rows per transaction. */
const CHUNK = 50_000;
const UNFINISHED = values.unfinished === true;

/** Samples: what a real emulator stores for a mix of work, as a state document. */
async function samples(): Promise<StateDocument> {
  const emulator = await createEmulator({ clock: 'manual', adminToken: 'grow', log: () => undefined, resolveHost: resolvePublic });
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
    // Two virtual hours later every sample has finished, but for a store of unfinished tasks.
    const res = await fetch(`${base}/_emulator/clock/advance`, {
      method: 'POST',
      headers: { Authorization: 'Bearer grow', 'Content-Type': 'application/json' },
      body: UNFINISHED ? '{"seconds":0}' : '{"seconds":7200}',
    });
    if (res.status !== 200) throw new Error(`sample advance: ${res.status} ${await res.text()}`);
    return exportState(emulator.internals.db, emulator.clock.now());
  } finally {
    await emulator.close();
  }
}

/** Thousandths of a point from a three-decimal string, and back. */
const milli = (points: string): bigint => BigInt(points.replace('.', ''));
const points = (m: bigint): string => {
  const sign = m < 0n ? '-' : '';
  const abs = m < 0n ? -m : m;
  return `${sign}${abs / 1000n}.${String(abs % 1000n).padStart(3, '0')}`;
};
const pad = (n: number, width: number): string => String(n).padStart(width, '0');

/** Runs `count` steps in transactions of CHUNK. */
function chunked(db: Db, count: number, step: (i: number) => void): void {
  for (let from = 0; from < count; from += CHUNK) {
    db.store.transaction(() => {
      for (let i = from; i < Math.min(count, from + CHUNK); i += 1) step(i);
    });
  }
}

const started = performance.now();
const sample = await samples();
const nowMs = sample.clock_ms ?? Date.now();
const terminal = sample.tasks.filter((t) => (t.task.status === 'queued') === UNFINISHED && t.task.status !== 'processing');
if (terminal.length === 0) throw new Error(UNFINISHED ? 'no queued sample tasks' : 'no finished sample tasks');
const entriesOf = new Map<string, LedgerEntry[]>(terminal.map((t) => [t.task.id, sample.ledger.filter((e) => e.task_id === t.task.id)]));
const callSamples = sample.calls;
if (callSamples.length === 0) throw new Error('no sample call records');

const store = openStore({ path, check: false });
// A build, not a store in service: no waiting for the disk, and a cache as large as one transaction's pages.
store.driver.exec('PRAGMA synchronous = OFF; PRAGMA cache_size = -262144');
const db = repositories(store);
try {
  if (db.tasks.count() > 0) throw new Error(`${path}: not an empty store`);
  // The samples as they are (accounts, keys, their tasks and ledger, files, scenarios), but their call records:
  // every call record is a copy, so all of them fall in the age window asked for.
  store.transaction(() => importState(db, { ...sample, calls: [] }));
  store.transaction(() => store.meta.set('clock_ms', nowMs));

  // Tasks: spread over the last 29 days, oldest first (so seq follows creation), terminal (a grown instance's
  // old tasks are done), each with its sample's ledger entries; every tenth with an Idempotency-Key.
  const copies = Math.max(0, TASKS - sample.tasks.length);
  let ledgerId = db.ledger.lastId();
  const charged = new Map<string, bigint>();
  chunked(db, copies, (i) => {
    const from = terminal[i % terminal.length] as StoredTask;
    const createdMs = UNFINISHED ? nowMs - 60_000 + Math.floor((i / copies) * 60_000) : nowMs - 29 * DAY + Math.floor((i / copies) * 28 * DAY);
    const id = `T${compactTime(createdMs)}${pad(i, 6)}`;
    const idempotencyKey = i % 10 === 0 ? `grow-${i}` : null;
    const { seq: _seq, ...rest } = from;
    db.tasks.insert({ ...rest, idempotency_key: idempotencyKey, created_ms: createdMs, task: { ...from.task, id, created_at: formatTime(createdMs) } });
    if (idempotencyKey) db.idempotency.put(from.account_id, idempotencyKey, { task_id: id, model: from.task.model, input: '{}' });
    for (const entry of entriesOf.get(from.task.id) ?? []) {
      ledgerId += 1;
      // Without its account number: the copy is numbered after the account's last entry.
      const { n: _n, ...copy } = entry;
      db.ledger.restore({ ...copy, id: ledgerId, task_id: id, at: formatTime(createdMs) });
      // What the copy took from available for good: its freeze, less what came back.
      const change = entry.kind === 'freeze' ? milli(entry.points) : entry.kind === 'refund' ? -milli(entry.points) : 0n;
      charged.set(entry.account_id, (charged.get(entry.account_id) ?? 0n) + change);
    }
  });

  // Each account funded once for what its copies charged, then its balances written from the ledger's sums.
  store.transaction(() => {
    for (const [accountId, m] of charged) {
      if (m <= 0n) continue;
      ledgerId += 1;
      db.ledger.restore({ id: ledgerId, account_id: accountId, kind: 'fund', points: points(m), task_id: null, at: formatTime(nowMs - 30 * DAY) });
    }
    const sums = db.ledger.sums();
    for (const account of db.accounts.all()) {
      const s = sums.get(account.id) ?? { fund: 0n, freeze: 0n, charge: 0n, refund: 0n };
      db.accounts.put({
        ...account,
        available: points(s.fund - s.freeze + s.refund),
        frozen: points(s.freeze - s.charge - s.refund),
        charged: points(s.charge),
      });
    }
    // The copied entries are settled history: no start should look at them for interrupted text calls.
    store.meta.set('ledger_checked', db.ledger.lastId());
  });

  // Call records: arrival order, from OLDEST_DAYS to NEWEST_DAYS before the store's clock, each a sample's record
  // under a fresh request id and its own time. Made by SQL from the samples (in a temporary table), CHUNK to a
  // transaction: the same rows `db.calls.put` writes, without a round trip into the driver per record.
  store.driver.exec('CREATE TEMP TABLE grow_calls (k INTEGER PRIMARY KEY, account_id TEXT, key TEXT, body TEXT) STRICT');
  store.transaction(() =>
    callSamples.forEach((call, k) =>
      store.driver.prepare('INSERT INTO grow_calls (k, account_id, key, body) VALUES (?, ?, ?, ?)').run(k, call.account_id, call.key, JSON.stringify(call)),
    ),
  );
  const copyCalls = store.driver.prepare(`
    WITH RECURSIVE n(i) AS (SELECT ?1 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?2),
      c(i, at_ms) AS (SELECT i, CAST(?3 + i * ?4 / ?5 AS INTEGER) FROM n)
    INSERT INTO calls (request_id, at_ms, account_id, key, body)
    SELECT printf('req_grow%020d', c.i), c.at_ms, s.account_id, s.key,
      json_set(s.body, '$.request_id', printf('req_grow%020d', c.i), '$.at', strftime('%Y-%m-%dT%H:%M:%S+08:00', (c.at_ms + ${BEIJING_MS}) / 1000, 'unixepoch'))
    FROM c JOIN grow_calls s ON s.k = c.i % ?6
    ORDER BY c.i`);
  const oldestMs = nowMs - OLDEST_DAYS * DAY;
  const spanMs = (OLDEST_DAYS - NEWEST_DAYS) * DAY;
  for (let from = 0; from < RECORDS; from += CHUNK) {
    store.transaction(() => copyCalls.run(from, Math.min(RECORDS, from + CHUNK), oldestMs, spanMs, RECORDS, callSamples.length));
  }
  store.driver.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  const count = (table: string): number => Number(store.driver.prepare(`SELECT count(*) FROM ${table}`).get()?.[0]);
  console.log(
    JSON.stringify({
      tasks: count('tasks'),
      records: count('calls'),
      ledger: count('ledger'),
      bytes: statSync(path).size,
      ms: performance.now() - started,
    }),
  );
} finally {
  store.close();
}
