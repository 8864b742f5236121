import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { Driver, SqlValue } from './driver.ts';
import { ledgerNumbered } from './schema.ts';

/**
 * What a store check reads: SQLite's own check of every page and index, then each account's balances beside the
 * sums of its ledger (a changed digit in a balance is no damage to SQLite, but breaks `funded = available +
 * frozen + charged`), then each account's ledger numbers, which run 1, 2, 3, … without a gap (the unique index
 * rules out a number twice; this reads that index alone). The reads are plain SQL so they run the same on the
 * emulator's connection and in a worker. A store opened read-only before its migration has no numbers yet.
 */
const queries = (full: boolean, numbered = true): string[] => [
  full ? 'PRAGMA integrity_check' : 'PRAGMA quick_check',
  'SELECT body FROM accounts',
  'SELECT account_id, kind, sum(milli) FROM ledger GROUP BY account_id, kind',
  numbered
    ? 'SELECT account_id, count(*), min(n), max(n) FROM ledger GROUP BY account_id HAVING min(n) <> 1 OR max(n) <> count(*)'
    : 'SELECT 1 WHERE 0',
];

/** Thousandths of a point from a three-decimal string, exactly (`-1.500` → -1500n). */
const milli = (points: unknown): bigint | null => (typeof points === 'string' && /^-?\d+\.\d{3}$/.test(points) ? BigInt(points.replace('.', '')) : null);

function problemsIn([pages = [], accounts = [], sums = [], misnumbered = []]: SqlValue[][][]): string[] {
  // SQLite's lines can hold line breaks ("*** in database main ***\nTree 26 page 26: ..."): one line each here.
  const problems = pages.map((row) => String(row[0]).replace(/\s*\n\s*/g, ' ')).filter((line) => line !== 'ok').slice(0, 5);
  const byAccount = new Map<string, Record<string, bigint>>();
  for (const [account, kind, total] of sums) {
    const entry = byAccount.get(String(account)) ?? {};
    entry[String(kind)] = BigInt(Number(total));
    byAccount.set(String(account), entry);
  }
  for (const [body] of accounts) {
    const account = JSON.parse(String(body)) as { id: string; available: unknown; frozen: unknown; charged: unknown };
    const s = byAccount.get(account.id) ?? {};
    const [fund = 0n, freeze = 0n, charge = 0n, refund = 0n, collect = 0n] = [s['fund'], s['freeze'], s['charge'], s['refund'], s['collect']];
    const expected = { available: fund - freeze + refund - collect, frozen: freeze - charge - refund, charged: charge + collect };
    for (const field of ['available', 'frozen', 'charged'] as const) {
      const stored = milli(account[field]);
      if (stored !== expected[field]) {
        problems.push(`account ${account.id}: ${field} is ${String(account[field])}, its ledger says ${(Number(expected[field]) / 1000).toFixed(3)}`);
      }
    }
  }
  for (const [account, count, first, last] of misnumbered) {
    problems.push(`account ${String(account)}: ${String(count)} ledger entries, numbered ${String(first)} to ${String(last)}`);
  }
  return problems;
}

/** Checks a store on this connection; `full` runs SQLite's complete integrity check. Empty when all is well. */
export function checkStore(driver: Driver, full = false): string[] {
  try {
    return problemsIn(queries(full, ledgerNumbered(driver)).map((sql) => driver.prepare(sql).all()));
  } catch (err) {
    // Damage bad enough that a query of the check itself fails is the check's answer, not a crash.
    if (!/^SQLITE_(CORRUPT|NOTADB)/.test((err as { code?: string }).code ?? '')) throw err;
    return [(err as Error).message];
  }
}

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.libsql);
const db = new Database(workerData.path, { readonly: true });
let results;
try {
  results = workerData.queries.map((sql) => db.prepare(sql).raw().all());
} finally {
  db.close();
}
parentPort.postMessage(results);
// The worker ends by itself: libsql's native code must not be torn down in the middle of a call.
parentPort.close();`;

/** The same check on a connection of its own in a worker thread: the event loop goes on serving meanwhile. */
export function checkStoreInBackground(path: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER, {
      eval: true,
      workerData: { path, queries: queries(false), libsql: createRequire(import.meta.url).resolve('libsql') },
    });
    worker.once('message', (results: SqlValue[][][]) => resolve(problemsIn(results)));
    worker.once('error', reject);
    worker.once('exit', () => reject(new Error('the store check ended without an answer')));
  });
}
