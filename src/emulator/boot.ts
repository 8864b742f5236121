import { dirname, join } from 'node:path';
import type { FaultFile } from '../faults/index.ts';
import { fileBytes, LONG_FILE_BYTES, sizeText } from '../log/index.ts';
import { repositories } from '../db.ts';
import { importState } from '../state/index.ts';
import { openStore } from '../store/index.ts';
import type { Store } from '../store/index.ts';
import type { Host } from './host.ts';
import { journalToImport, readFaultFileOrStop, readStateDocument } from './start-files.ts';

/** The default world's store, open and holding what the start imported, and what else the start read. */
export interface Booted {
  store: Store;
  /** Where its files' bytes live: beside a file store, else in memory. */
  filesDir: string | null;
  faults: FaultFile | null;
}

/**
 * The files a start reads, each read and checked whole before the store opens (a refused one leaves it untouched);
 * then the store, and the journal store and state document imported into it. `opened` hears of the store as soon
 * as it is open, so that a start failing later still closes it.
 */
export async function boot(host: Host, opened: (store: Store) => void): Promise<Booted> {
  const { options, contract, step, warn, log } = host;
  const faults = options.faults !== undefined ? readFaultFileOrStop(options.faults, contract) : null;
  const journal = options.db ? await journalToImport(options.db, options.journalStore, step) : null;
  const imported = options.importState ? await readStateDocument(options.importState, contract, step) : null;
  const storeBytes = options.db ? fileBytes(options.db) : 0;
  const store = step(
    `opening the store ${options.db ?? ''}`,
    `${sizeText(storeBytes)}, checked in the background once open`,
    // A write-ahead log a killed emulator left is read on opening, too.
    storeBytes + (options.db ? fileBytes(`${options.db}-wal`) : 0) >= LONG_FILE_BYTES,
    () =>
      openStore({
        ...(options.db ? { path: options.db } : {}),
        sync: options.storeSync ?? false,
        check: options.storeCheck ?? true,
        onEffectError: (err) => log(`an effect after a commit failed: ${String((err as Error)?.stack ?? err)}`),
      }),
  );
  opened(store);
  const db = repositories(store);
  if (journal) {
    step(`importing the journal store ${journal.from} into the store`, `${journal.state.tasks.length} tasks, ${journal.state.calls.length} call records`, journal.long, () =>
      store.transaction(() => importState(db, journal.state)),
    );
    warn(`imported the journal store ${journal.from} (${journal.state.tasks.length} tasks, ${journal.state.accounts.length} accounts)${journal.aside ? `; its files are in ${journal.aside}` : ''}`);
  }
  if (imported) {
    const { path, bytes, state } = imported;
    // Replacing a big store's records takes long too, however small the document.
    step(`importing the state document ${path}`, `${sizeText(bytes)}, replacing what the store holds`, bytes >= LONG_FILE_BYTES || storeBytes >= LONG_FILE_BYTES, () =>
      store.transaction(() => importState(db, state)),
    );
  }
  return { store, filesDir: options.db ? join(dirname(options.db), 'files') : null, faults };
}
