import { isEmpty } from '../accounts/index.ts';
import { keepRecordsFor30Days } from '../calls/index.ts';
import type { Clock } from '../clock/index.ts';
import type { Db } from '../db.ts';
import type { FaultRules } from '../faults/index.ts';
import type { BlobStore, FileKeeper } from '../files/index.ts';
import type { Concurrency, RateLimiter } from '../keys/index.ts';
import { sweepExpiredNonces } from '../keys/index.ts';
import { fileBytes, LONG_FILE_BYTES, LONG_TASK_COUNT, sizeText } from '../log/index.ts';
import type { Random } from '../random/index.ts';
import { releaseWhenTaskEnds } from '../service/index.ts';
import type { Part } from '../service/index.ts';
import { exportState, writeStateFile } from '../state/index.ts';
import { checkStoreInBackground, damageMessage } from '../store/index.ts';
import type { Store } from '../store/index.ts';
import type { TaskEngine } from '../tasks/index.ts';
import { refundInterruptedTextCalls } from '../text/index.ts';
import type { ClientLogStore } from '../verdict/index.ts';
import { keepDeliveriesFor } from '../webhooks/index.ts';
import type { Webhooks } from '../webhooks/index.ts';
import type { Host } from './host.ts';
import type { WorldSpec } from './world-types.ts';

/** What a world's parts act on: built by buildWorld, in world.ts. */
export interface WorldPieces {
  store: Store;
  db: Db;
  clock: Clock;
  random: Random;
  engine: TaskEngine;
  webhooks: Webhooks;
  files: FileKeeper;
  blobs: BlobStore;
  concurrency: Concurrency;
  rateLimiter: RateLimiter;
  faults: FaultRules;
  clientLog: ClientLogStore;
  status: { storeDamage: string | null };
  spec: WorldSpec;
}

/**
 * What a world runs, in order: each part's start at start, its afterReplace once a reset or a state import has
 * replaced everything stored, and its stop at close (in reverse order: the store last).
 */
export function worldParts(host: Host, w: WorldPieces): Part[] {
  const { store, db, clock, engine, webhooks, concurrency, spec } = w;
  const { warn, step, log, options } = host;
  // Waited for before the store closes: a process must not end while the check's worker is in the middle of a query.
  let backgroundCheck: Promise<void> = Promise.resolve();
  const schedule = (holders = db.tasks.unfinishedHolders()): void => {
    concurrency.rebuild(holders);
    // Not waited for: the first page is scheduled now, the rest while the emulator already answers.
    engine.resume().catch((err: unknown) => log(`could not schedule every unfinished task: ${String(err)}`));
  };
  return [
    // Last: no transaction may follow.
    {
      name: 'store',
      stop: async () => {
        await backgroundCheck;
        await store.close();
      },
    },
    {
      name: 'export on exit',
      stop: async () => {
        if (spec.exportOnExit) await writeStateFile(spec.exportOnExit, exportState(db, clock.now()));
      },
    },
    { name: 'clock', stop: () => clock.stop() },
    {
      name: 'seed accounts',
      start: () => {
        if (isEmpty(db)) store.transaction(() => spec.seedAccounts(db, w.random, clock.now()));
      },
    },
    {
      name: 'interrupted text calls',
      start: () => {
        const interrupted = refundInterruptedTextCalls(db, clock.now());
        if (interrupted.length > 0) {
          warn(`refunded ${interrupted.length} text call(s) the last run stopped in the middle of: ${interrupted.slice(0, 5).join(', ')}`);
        }
      },
    },
    {
      name: 'task ends',
      start: () => {
        engine.onTerminal(releaseWhenTaskEnds(db, concurrency));
        engine.onTerminal(webhooks.taskFinished);
      },
    },
    { name: 'file bytes', afterReplace: () => w.blobs.clear() },
    {
      name: 'tasks',
      start: () => {
        // Each unfinished task is read and scheduled (some 50 µs each): a store of many takes seconds. Counted
        // from the holders' index, which concurrency needs anyway.
        const holders = db.tasks.unfinishedHolders();
        const unfinished = holders.reduce((sum, held) => sum + held.count, 0);
        step(`scheduling ${unfinished} unfinished tasks`, null, unfinished >= LONG_TASK_COUNT, () => schedule(holders));
      },
      afterReplace: () => schedule(),
    },
    { name: 'rate limits', afterReplace: () => w.rateLimiter.clear() },
    // A reset (or an import) starts a new run: no fault rule of the last one (those of --faults included: a reset
    // clears every rule), no verdict on what it saw.
    {
      name: 'faults and client log',
      start: () => {
        if (spec.faults) w.faults.add(spec.faults.rules, spec.faults.seed);
      },
      afterReplace: () => {
        w.faults.clear();
        w.clientLog.clear();
      },
    },
    { name: 'file expiry', start: () => w.files.resume(), afterReplace: () => w.files.resume() },
    { name: 'callbacks', start: () => webhooks.resume(), afterReplace: () => webhooks.resume(), stop: () => webhooks.stop() },
    {
      name: 'retention',
      start: () => {
        keepRecordsFor30Days(clock, db);
        keepDeliveriesFor(clock, db, options.deliveryRetentionSeconds !== undefined ? options.deliveryRetentionSeconds * 1000 : undefined);
        sweepExpiredNonces(clock, db);
      },
    },
    {
      // Once everything the start reads has been read (a damaged row it meets stops the start instead).
      name: 'store check',
      start: () => {
        if (!store.backgroundCheck || !store.path) return;
        const path = store.path;
        backgroundCheck = step(`checking the store ${path} in the background`, sizeText(fileBytes(path)), fileBytes(path) >= LONG_FILE_BYTES, () =>
          checkStoreInBackground(path),
        ).then(
          (problems) => {
            if (problems.length === 0) return;
            w.status.storeDamage = damageMessage(path, problems);
            log(w.status.storeDamage);
          },
          (err: unknown) => log(`the store check could not run: ${String(err)}`),
        );
      },
    },
  ];
}
