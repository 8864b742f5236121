import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * WAL checkpoints off the event loop. SQLite's automatic checkpoint runs inside the COMMIT that crosses its
 * threshold, copying the log into the database and syncing it on the committing thread: tens of milliseconds,
 * more on a busy disk, in the middle of a request. This worker, on a connection of its own, copies what it can
 * every `everyMs` of real time (passive: it never waits for the writer), so the COMMIT that crosses the store's
 * (high) threshold has almost nothing left to copy.
 */
export interface Checkpointer {
  /** Bytes of log written since it was last rewound, as of the worker's last checkpoint. */
  logBytes(): number;
  stop(): Promise<void>;
}

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.libsql);
const db = new Database(workerData.path);
db.exec('PRAGMA busy_timeout = 0');
const tick = () => {
  try {
    // [busy, frames in the log, frames copied]
    parentPort.postMessage(db.prepare('PRAGMA wal_checkpoint(PASSIVE)').raw().get());
  } catch {
    // Busy or closing: the next tick tries again.
  }
};
const timer = setInterval(tick, workerData.everyMs);
parentPort.on('message', () => {
  clearInterval(timer);
  tick();
  db.close();
  // Nothing left to keep it alive: the worker ends by itself (libsql's native code must not be torn down mid-call).
  parentPort.close();
});`;

export function startCheckpointer(path: string, everyMs = 1000): Checkpointer {
  const worker = new Worker(WORKER, { eval: true, workerData: { path, everyMs, libsql: createRequire(import.meta.url).resolve('libsql') } });
  worker.unref();
  worker.on('error', () => undefined);
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  let frames = 0;
  worker.on('message', (result: number[]) => {
    frames = Number(result[1] ?? 0);
  });
  return {
    // A frame is a page (4096 bytes) and its 24-byte header.
    logBytes: () => frames * 4120,
    stop() {
      // Held from here: whoever waits for the stop is kept alive until the worker has ended.
      worker.ref();
      worker.postMessage('stop');
      return exited;
    },
  };
}
