import { accountsRepo, keysRepo } from './accounts/index.ts';
import { ledgerRepo } from './billing/index.ts';
import { callsRepo } from './calls/index.ts';
import { filesRepo } from './files/index.ts';
import { noncesRepo } from './keys/index.ts';
import type { NoncesRepo } from './keys/index.ts';
import { scenariosRepo } from './scenarios/index.ts';
import type { Repositories } from './state/index.ts';
import type { Store } from './store/index.ts';
import { idempotencyRepo, tasksRepo } from './tasks/index.ts';
import { deliveriesRepo } from './webhooks/index.ts';

/**
 * The store with one repository per kind of record, as the composition hands it out (its shape is the state
 * import's `Repositories`, the one place that needs every repository of the state, and the nonces beside them).
 * Domain code takes the few repositories it uses, typed from their owners, and makes its changes inside
 * `store.transaction`.
 */
export type Db = Repositories & {
  /** The nonces signed requests used: the store keeps them, but no state document (they are not the state). */
  nonces: NoncesRepo;
};

export function repositories(store: Store): Db {
  return {
    store,
    accounts: accountsRepo(store),
    keys: keysRepo(store),
    tasks: tasksRepo(store),
    idempotency: idempotencyRepo(store),
    ledger: ledgerRepo(store),
    files: filesRepo(store),
    deliveries: deliveriesRepo(store),
    calls: callsRepo(store),
    scenarios: scenariosRepo(store),
    nonces: noncesRepo(store),
  };
}
