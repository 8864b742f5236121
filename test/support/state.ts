import { repositories } from '../../src/db.ts';
import type { Emulator } from '../../src/index.ts';
import { openStore } from '../../src/store/index.ts';
import { exportState } from '../../src/state/index.ts';
import type { StateDocument } from '../../src/state/index.ts';

/** Everything the emulator has stored, as its state export gives it. */
export const stateOf = (emulator: Pick<Emulator, 'internals'>): StateDocument => exportState(emulator.internals.db, null);

/** The stored state but the call records and the clock's position, which every request moves. */
export const recordsBesideCalls = (emulator: Pick<Emulator, 'internals'>): string =>
  JSON.stringify({ ...stateOf(emulator), calls: undefined, clock_ms: undefined });

/**
 * A number that moves whenever a table the state export reads (all but the call records and the store's own
 * values) may have been written: the driver counts writes per table, and a statement it cannot place counts
 * for every table. Equal numbers, equal `recordsBesideCalls`, without reading the store.
 */
export function exportedVersion(emulator: Pick<Emulator, 'internals'>): number {
  const { driver } = emulator.internals.store;
  const tables = driver.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT IN ('calls', 'meta')").all();
  return tables.reduce((sum, [name]) => sum + driver.version(String(name)), 0);
}

/**
 * What a restart on the store file would find: every committed transaction, read through a connection of its own
 * (no lock taken, so also while an emulator holds the store, or on a copy of its files).
 */
export function stateOnDisk(path: string): StateDocument {
  const store = openStore({ path, readOnly: true });
  try {
    return exportState(repositories(store), null);
  } finally {
    store.close();
  }
}
