import { parseTime } from '../clock/index.ts';
import type { AccountsRepo, KeysRepo } from '../accounts/index.ts';
import type { LedgerRepo, RestoredEntry } from '../billing/index.ts';
import type { CallsRepo } from '../calls/index.ts';
import type { FilesRepo } from '../files/index.ts';
import type { ScenariosRepo } from '../scenarios/index.ts';
import type { Store } from '../store/index.ts';
import type { IdempotencyRepo, TasksRepo } from '../tasks/index.ts';
import type { DeliveriesRepo } from '../webhooks/index.ts';
import { ApiError } from '../errors/index.ts';
import { STATE_FORMAT, STATE_VERSION } from './document.ts';
import { ledgerNumberDetails } from './rules.ts';
import type { StateDocument } from './document.ts';

/**
 * Every repository of the store: a state document replaces all of it. The composition's `Db` is this type (a domain
 * cannot import the composition, so the bundle is named here, where the whole of it is needed).
 */
export interface Repositories {
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

const SECTIONS = ['accounts', 'keys', 'tasks', 'idempotency', 'ledger', 'files', 'deliveries', 'calls', 'scenarios'] as const;

/**
 * What is wrong with a document that claims to be a state, or null: its format and sections, and the ledger's
 * numbers. The guard of every import; a document from outside is checked whole first (checkStateDocument), a
 * journal store's records (the emulator's own) only here.
 */
export function stateProblem(doc: unknown): string | null {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return 'not a JSON object';
  const state = doc as Partial<StateDocument>;
  if (state.format !== STATE_FORMAT) return `format must be '${STATE_FORMAT}'`;
  if (state.version !== STATE_VERSION) return `version ${String(state.version)} is not ${STATE_VERSION}`;
  for (const section of SECTIONS) if (!Array.isArray(state[section])) return `${section} must be a list`;
  const ledger = state.ledger as unknown[];
  if (ledger.some((entry) => typeof entry !== 'object' || entry === null)) return 'ledger entries must be objects';
  const [problem] = ledgerNumberDetails(ledger as RestoredEntry[]);
  return problem ? `${problem.field} ${problem.message}` : null;
}

/**
 * Replaces everything stored with the document's records, inside the caller's transaction (all or nothing).
 * Returns the clock position the document had.
 */
export function importState(db: Repositories, state: StateDocument): number | null {
  const problem = stateProblem(state);
  if (problem) throw new ApiError('invalid_params', `Not a state document: ${problem}.`);
  const { store } = db;
  store.wipe();
  for (const account of state.accounts) db.accounts.put(account);
  for (const key of state.keys) db.keys.put(key);
  for (const { seq: _seq, ...task } of state.tasks) db.tasks.insert(task);
  for (const { account_id, key, ...record } of state.idempotency) db.idempotency.put(account_id, key, record);
  for (const entry of state.ledger) db.ledger.restore(entry);
  let fileSeq = store.meta.get<number>('file_seq') ?? 0;
  for (const file of state.files) {
    db.files.restore(file);
    fileSeq = Math.max(fileSeq, Number(file.id.slice('file_'.length)) || 0);
  }
  store.meta.set('file_seq', fileSeq);
  for (const delivery of state.deliveries) db.deliveries.put(delivery);
  for (const call of state.calls) db.calls.put(call, parseTime(call.at));
  if (state.scenarios.length > 0) db.scenarios.load(state.scenarios);
  // Every ledger entry of the document is settled history: none is a text call still running.
  store.meta.set('ledger_checked', db.ledger.lastId());
  // A document written by hand may leave the clock's position out.
  return state.clock_ms ?? null;
}
