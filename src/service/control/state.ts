import type { StateDocument } from '../../state/index.ts';
import type { ControlDeps, StateCounts } from './deps.ts';

/** The whole state at once. @see openapi/admin.yaml "State" */
export function stateControl({ state }: Pick<ControlDeps, 'state'>) {
  return {
    /** Wipes the store and seeds it again (the seed accounts and keys); scheduled work follows. */
    reset(): { ok: true; accounts: number; keys: number } {
      const { accounts, keys } = state.reset();
      return { ok: true, accounts, keys };
    },
    export: (): StateDocument => state.export(),
    /** Replaces everything stored by a document already checked (`checkStateDocument`). */
    import: (document: StateDocument): { ok: true } & StateCounts => ({ ok: true, ...state.import(document) }),
  };
}
