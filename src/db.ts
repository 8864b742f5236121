import { accountsRepo, keysRepo } from './accounts/index.ts';
import type { AccountsRepo, KeysRepo } from './accounts/index.ts';
import { ledgerRepo } from './billing/index.ts';
import type { LedgerRepo } from './billing/index.ts';
import { callsRepo } from './calls/index.ts';
import type { CallsRepo } from './calls/index.ts';
import { filesRepo } from './files/index.ts';
import type { FilesRepo } from './files/index.ts';
import { scenariosRepo } from './scenarios/index.ts';
import type { ScenariosRepo } from './scenarios/index.ts';
import type { Store } from './store/index.ts';
import { idempotencyRepo, tasksRepo } from './tasks/index.ts';
import type { IdempotencyRepo, TasksRepo } from './tasks/index.ts';
import { deliveriesRepo } from './webhooks/index.ts';
import type { DeliveriesRepo } from './webhooks/index.ts';

/**
 * The store with one repository per kind of record. Domain code takes the few repositories it uses
 * (`Pick<Db, 'tasks' | 'ledger'>`) and makes its changes inside `store.transaction`.
 */
export interface Db {
  store: Store;
  accounts: AccountsRepo;
  keys: KeysRepo;
  tasks: TasksRepo;
  idempotency: IdempotencyRepo;
  ledger: LedgerRepo;
  files: FilesRepo;
  deliveries: DeliveriesRepo;
  calls: CallsRepo;
  scenarios: ScenariosRepo;
}

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
  };
}
