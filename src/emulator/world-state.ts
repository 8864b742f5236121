import type { Clock } from '../clock/index.ts';
import type { Db } from '../db.ts';
import type { StateCounts, StateOps } from '../service/index.ts';
import { exportState, importState } from '../state/index.ts';
import type { Store } from '../store/index.ts';
import type { StateDocument } from '../state/index.ts';
import { ApiError } from '../errors/index.ts';

/**
 * A world's whole state at once: everything stored replaced in one transaction (a reset, a state import), then
 * every part follows it (`afterReplace`: caches built from the store, work the new records hold scheduled).
 */
export function worldState(store: Store, db: Db, afterReplace: () => void, seed: (nowMs: number) => void, clock: Clock, keyElsewhere: (key: string) => boolean): StateOps {
  const replaceAll = (fill: () => void): StateCounts =>
    store.transaction(() => {
      fill();
      store.afterCommit(afterReplace);
      const accounts = db.accounts.all();
      return {
        accounts: accounts.length,
        keys: accounts.reduce((sum, a) => sum + db.keys.ofAccount(a.id).length, 0),
        tasks: db.tasks.count(),
      };
    });
  return {
    reset: () =>
      replaceAll(() => {
        store.wipe();
        // Ledger ids start again from 1: the check for interrupted text calls starts again with them.
        store.meta.set('ledger_checked', 0);
        seed(clock.now());
      }),
    export: () => exportState(db, clock.now()),
    // The import wipes the store itself, and sets where the check for interrupted text calls starts.
    import: (document) => {
      refuseKeysElsewhere(document, keyElsewhere);
      return replaceAll(() => importState(db, document));
    },
  };
}

/** Every key belongs to exactly one world (that is how a request finds its session): 422 naming the first that does not. */
export function refuseKeysElsewhere(document: StateDocument, keyElsewhere: (key: string) => boolean, prefix = ''): void {
  document.keys.forEach((k, i) => {
    const field = `${prefix}keys[${i}].key`;
    if (keyElsewhere(k.key)) throw new ApiError('invalid_params', `${field} is already in use on this emulator (in another session)`, [{ field, message: 'is already in use on this emulator' }]);
  });
}
