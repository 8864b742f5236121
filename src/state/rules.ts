import { add, cmp, sub, ZERO } from '../points/index.ts';
import type { LedgerKind, RestoredEntry } from '../billing/index.ts';
import type { Points } from '../points/index.ts';
import type { ErrorDetail } from '../errors/index.ts';
import type { StateDocument } from './document.ts';

/**
 * The rules of a state document that its schema (openapi/admin.yaml StateDocument) cannot say: ids used once,
 * records of accounts (and tasks) the document holds, each account's ledger numbered 1, 2, 3, … and balances
 * that are what the ledger says. A document that breaks one would fail the import halfway or leave a store
 * that does not start (src/store/check.ts checks the same balances and numbers once a store is open).
 */
export function stateRuleDetails(state: StateDocument): ErrorDetail[] {
  return [...duplicateDetails(state), ...referenceDetails(state), ...ledgerNumberDetails(state.ledger), ...balanceDetails(state)];
}

/** Each value used twice in a section, named at its second use. */
function duplicates<T>(section: string, records: readonly T[], field: string, valueOf: (record: T) => string): ErrorDetail[] {
  const seen = new Set<string>();
  const details: ErrorDetail[] = [];
  records.forEach((record, i) => {
    const value = valueOf(record);
    if (seen.has(value)) details.push({ field: `${section}[${i}].${field}`, message: `'${value}' is used twice` });
    seen.add(value);
  });
  return details;
}

function duplicateDetails(state: StateDocument): ErrorDetail[] {
  return [
    ...duplicates('accounts', state.accounts, 'id', (a) => a.id),
    ...duplicates('keys', state.keys, 'key', (k) => k.key),
    ...duplicates('tasks', state.tasks, 'task.id', (t) => t.task.id),
    ...duplicates('idempotency', state.idempotency, 'key', (r) => `${r.account_id} ${r.key}`),
    ...duplicates('ledger', state.ledger, 'id', (e) => String(e.id)),
    ...duplicates('files', state.files, 'id', (f) => f.id),
    ...duplicates('files', state.files, 'name', (f) => f.name),
    ...duplicates('deliveries', state.deliveries, 'id', (d) => d.id),
    ...duplicates('calls', state.calls, 'request_id', (c) => c.request_id),
    ...duplicates('scenarios', state.scenarios, 'name', (s) => s.name),
  ];
}

/** Records that name an account (or a task) the document does not hold. */
function referenceDetails(state: StateDocument): ErrorDetail[] {
  const accounts = new Set(state.accounts.map((a) => a.id));
  const tasks = new Set(state.tasks.map((t) => t.task.id));
  const details: ErrorDetail[] = [];
  const ofAccount = (section: string, records: readonly { account_id: string }[]): void =>
    records.forEach((record, i) => {
      if (!accounts.has(record.account_id)) details.push({ field: `${section}[${i}].account_id`, message: `names no account of the document ('${record.account_id}')` });
    });
  ofAccount('keys', state.keys);
  ofAccount('tasks', state.tasks);
  ofAccount('idempotency', state.idempotency);
  ofAccount('ledger', state.ledger);
  ofAccount('files', state.files);
  ofAccount('deliveries', state.deliveries);
  state.idempotency.forEach((record, i) => {
    if (!tasks.has(record.task_id)) details.push({ field: `idempotency[${i}].task_id`, message: `names no task of the document ('${record.task_id}')` });
  });
  return details;
}

/**
 * What is wrong with the ledger's per-account numbers (at most one detail): walked as the import numbers them (an
 * entry without `n`, as documents written before the numbers have it, takes its account's next), a number must be
 * one its account has not used yet, and each account's numbers must end up 1, 2, 3, … without a gap.
 */
export function ledgerNumberDetails(ledger: readonly RestoredEntry[]): ErrorDetail[] {
  const used = new Map<string, { last: number; numbers: Set<number>; at: number }>();
  for (const [i, entry] of ledger.entries()) {
    const account = used.get(entry.account_id) ?? { last: 0, numbers: new Set<number>(), at: i };
    used.set(entry.account_id, account);
    const n = entry.n ?? account.last + 1;
    if (!Number.isSafeInteger(n) || n < 1) {
      return [{ field: `ledger[${i}].n`, message: `is ${String(n)}; numbers are whole numbers from 1` }];
    }
    if (account.numbers.has(n)) return [{ field: `ledger[${i}].n`, message: `repeats number ${n} of account ${entry.account_id}` }];
    account.numbers.add(n);
    if (n >= account.last) account.at = i;
    account.last = Math.max(account.last, n);
  }
  for (const [id, account] of used) {
    if (account.last !== account.numbers.size) {
      return [{ field: `ledger[${account.at}].n`, message: `is ${account.last}, but account ${id} has ${account.numbers.size} entries: they are numbered 1, 2, 3, … without a gap` }];
    }
  }
  return [];
}

/**
 * Each account's balances against its ledger, exactly (big.js): available = fund − freeze + refund − collect,
 * frozen = freeze − charge − refund, charged = charge + collect.
 * @see src/billing/ledger.ts
 */
function balanceDetails(state: StateDocument): ErrorDetail[] {
  const sums = new Map<string, Record<LedgerKind, Points>>();
  for (const entry of state.ledger) {
    const sum = sums.get(entry.account_id) ?? { fund: ZERO, freeze: ZERO, charge: ZERO, refund: ZERO, collect: ZERO };
    sum[entry.kind] = add(sum[entry.kind], entry.points);
    sums.set(entry.account_id, sum);
  }
  const details: ErrorDetail[] = [];
  state.accounts.forEach((account, i) => {
    const s = sums.get(account.id) ?? { fund: ZERO, freeze: ZERO, charge: ZERO, refund: ZERO, collect: ZERO };
    const expected = {
      available: sub(add(sub(s.fund, s.freeze), s.refund), s.collect),
      frozen: sub(sub(s.freeze, s.charge), s.refund),
      charged: add(s.charge, s.collect),
    };
    for (const field of ['available', 'frozen', 'charged'] as const) {
      if (cmp(account[field], expected[field]) !== 0) {
        details.push({ field: `accounts[${i}].${field}`, message: `is ${account[field]}, but the ledger's entries of ${account.id} make it ${expected[field]}` });
      }
    }
  });
  return details;
}
