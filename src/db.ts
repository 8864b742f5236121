import { accountsRepo, keysRepo } from './accounts/records.ts';
import type { AccountsRepo, KeysRepo } from './accounts/records.ts';
import { ledgerRepo } from './billing/ledger-records.ts';
import type { LedgerRepo } from './billing/ledger-records.ts';
import { callsRepo } from './calls/records.ts';
import type { CallsRepo } from './calls/records.ts';
import { filesRepo } from './files/records.ts';
import type { FilesRepo } from './files/records.ts';
import { scenariosRepo } from './scenarios/store.ts';
import type { ScenariosRepo } from './scenarios/store.ts';
import type { Store } from './store/index.ts';
import { idempotencyRepo, tasksRepo } from './tasks/records.ts';
import type { IdempotencyRepo, TasksRepo } from './tasks/records.ts';
import { deliveriesRepo } from './webhooks/records.ts';
import type { DeliveriesRepo } from './webhooks/records.ts';

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
