import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { checkSafely, findProblems } from './check.ts';
import type { Driver } from './driver.ts';
import { readOnlyUri } from './libsql-driver.ts';
import { DATA_TABLES } from './schema.ts';

/**
 * The store check on this connection (`store check`, tests): one line per problem, empty when sound. One read
 * transaction: every query sees the same snapshot, so a commit of a running emulator between two of them (an
 * account's balances, then its ledger) is never taken for damage.
 */
export function checkStore(driver: Driver): string[] {
  driver.exec('SAVEPOINT store_check');
  try {
    return checkSafely(driver, DATA_TABLES);
  } finally {
    // A file that failed a query may fail the release too: the snapshot is let go all the same.
    try {
      driver.exec('RELEASE store_check');
    } catch {
      try {
        driver.exec('ROLLBACK TO store_check; RELEASE store_check');
      } catch {
        // Nothing left open.
      }
    }
  }
}

// The check's own functions, from their source text (check.ts says why). A compiler may have wrapped its inner
// functions to keep their names (`__name(fn, "name")`): the worker defines that as doing nothing.
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.libsql);
const __name = (fn) => fn;
const findProblems = (${findProblems.toString()});
const checkSafely = (${checkSafely.toString()});
let answer;
try {
  // A read-only connection (SQLite's mode=ro: libsql ignores \`readonly\`), and one read transaction (checkStore).
  const db = new Database(workerData.uri);
  try {
    db.exec('BEGIN');
    try {
      answer = { problems: checkSafely({ scan: (sql) => db.prepare(sql).raw(true).iterate() }, workerData.tables) };
    } finally {
      try {
        db.exec('COMMIT');
      } catch {
        // A file that failed a query may fail this too; the snapshot goes with the connection.
      }
    }
  } finally {
    db.close();
  }
} catch (err) {
  answer = { failed: String(err && err.message) };
}
parentPort.postMessage(answer);
// The worker ends by itself: libsql's native code must not be torn down in the middle of a call.
parentPort.close();`;

/** The same check in a worker thread on a connection of its own: the event loop goes on serving meanwhile. */
export function checkStoreInBackground(path: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER, {
      eval: true,
      workerData: { uri: readOnlyUri(path), tables: [...DATA_TABLES], libsql: createRequire(import.meta.url).resolve('libsql') },
    });
    worker.once('message', (answer: { problems: string[] } | { failed: string }) =>
      'problems' in answer ? resolve(answer.problems) : reject(new Error(answer.failed)),
    );
    worker.once('error', reject);
    worker.once('exit', () => reject(new Error('the store check ended without an answer')));
  });
}
