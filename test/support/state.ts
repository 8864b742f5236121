import { repositories } from '../../src/db.ts';
import type { Emulator } from '../../src/index.ts';
import { openStore } from '../../src/store/index.ts';
import { exportState } from '../../src/state/index.ts';
import type { StateDocument } from '../../src/state/index.ts';

/** Everything the emulator has stored, as its state export gives it. */
export const stateOf = (emulator: Pick<Emulator, 'db'>): StateDocument => exportState(emulator.db, null);

/** The stored state but the call records and the clock's position, which every request moves. */
export const recordsBesideCalls = (emulator: Pick<Emulator, 'db'>): string =>
  JSON.stringify({ ...stateOf(emulator), calls: undefined, clock_ms: undefined });

/**
 * What a restart on the store file would find: opened as the emulator opens it, read, and closed. While an
 * emulator holds the store, `whileHeld` reads the file beside it instead (what a kill -9 now would leave).
 */
export function stateOnDisk(path: string, whileHeld = false): StateDocument {
  const store = openStore({ path, readOnly: whileHeld });
  try {
    return exportState(repositories(store), null);
  } finally {
    store.close();
  }
}
