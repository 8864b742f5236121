import { parseTime } from '../clock/index.ts';
import type { Db } from '../db.ts';
import type { RestoredEntry } from '../billing/index.ts';
import { ApiError } from '../errors/index.ts';
import { STATE_FORMAT, STATE_VERSION } from './document.ts';
import type { StateDocument } from './document.ts';

const SECTIONS = ['accounts', 'keys', 'tasks', 'idempotency', 'ledger', 'files', 'deliveries', 'calls', 'scenarios'] as const;

/** What is wrong with a document that claims to be a state, or null. Records are trusted but for the ledger's numbers. */
export function stateProblem(doc: unknown): string | null {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return 'not a JSON object';
  const state = doc as Partial<StateDocument>;
  if (state.format !== STATE_FORMAT) return `format must be '${STATE_FORMAT}'`;
  if (state.version !== STATE_VERSION) return `version ${String(state.version)} is not ${STATE_VERSION}`;
  for (const section of SECTIONS) if (!Array.isArray(state[section])) return `${section} must be a list`;
  return ledgerNumbersProblem(state.ledger as RestoredEntry[]);
}

/**
 * What is wrong with the ledger's per-account numbers, or null: walked as the import numbers them (an entry without
 * `n`, as documents written before the numbers have it, takes its account's next), a number must be a whole number
 * above 0 that its account has not used yet.
 */
function ledgerNumbersProblem(ledger: RestoredEntry[]): string | null {
  const used = new Map<string, { last: number; numbers: Set<number> }>();
  for (const entry of ledger) {
    if (typeof entry !== 'object' || entry === null) return 'ledger entries must be objects';
    const account = used.get(entry.account_id) ?? { last: 0, numbers: new Set<number>() };
    used.set(entry.account_id, account);
    const n = entry.n ?? account.last + 1;
    if (!Number.isSafeInteger(n) || n < 1) return `ledger entry ${String(entry.id)} has number ${String(n)}; numbers are whole numbers from 1`;
    if (account.numbers.has(n)) return `ledger entry ${String(entry.id)} repeats number ${n} of account ${entry.account_id}`;
    account.numbers.add(n);
    account.last = Math.max(account.last, n);
  }
  return null;
}

/**
 * Replaces everything stored with the document's records, inside the caller's transaction (all or nothing).
 * Returns the clock position the document had.
 */
export function importState(db: Db, state: StateDocument): number | null {
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
  return state.clock_ms;
}
