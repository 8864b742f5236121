import Big from 'big.js';
import { cachedRows, ledgerNumbered, storedJson } from '../store/index.ts';
import type { Store } from '../store/index.ts';
import type { SqlValue } from '../store/index.ts';
import type { LedgerEntry, LedgerKind } from './ledger.ts';
import type { Points } from '../points/index.ts';

/** An entry as a state document holds it: one written before per-account numbers has no `n`. */
export type RestoredEntry = Omit<LedgerEntry, 'n'> & { n?: number };

export interface LedgerRepo {
  /** Writes an entry under the next id, as its account's next number. */
  append(entry: Omit<LedgerEntry, 'id' | 'n'>): LedgerEntry;
  /** Writes an entry under its own id and number (a state import); one without a number gets its account's next. */
  restore(entry: RestoredEntry): void;
  /** One account's entries, oldest first. */
  ofAccount(accountId: string): LedgerEntry[];
  /** One account's entries numbered above `after` (0 when not given), oldest first, `limit` at most. */
  page(accountId: string, options: { after?: number; limit: number }): LedgerEntry[];
  /** How many entries the account's ledger has, which is also its newest entry's number (they run without gaps). */
  count(accountId: string): number;
  /** Every account's entries with an id above `id`, in the order written. */
  after(id: number, limit: number): LedgerEntry[];
  /** The largest id (0 when there is none): where `after` goes on from. */
  lastId(): number;
  /** Per account, the sum of each kind in thousandths of a point (exact integers). */
  sums(): Map<string, Record<LedgerKind, bigint>>;
}

const entries = (rows: SqlValue[][]): LedgerEntry[] =>
  rows.map(([id, n, body]) => ({ id: Number(id), n: Number(n), ...storedJson<Omit<LedgerEntry, 'id' | 'n'>>(body) }));

/** Points as an integer number of thousandths, for exact sums in SQL. */
const milli = (points: Points): number => Number(new Big(points).times(1000).toFixed(0));

export function ledgerRepo(store: Store): LedgerRepo {
  const { driver } = store;
  // A store opened read-only keeps its schema: one older than the numbers (no `n` yet) reads as its migration
  // will number it, so `store export` of a store no emulator has opened since still writes them.
  const numbered = ledgerNumbered(driver);
  const ledger = numbered ? 'ledger' : '(SELECT *, row_number() OVER (PARTITION BY account_id ORDER BY id) AS n FROM ledger)';
  // Each account's next number, kept while only this repo's appends write the table (cachedRows: any other write,
  // a rollback, a reset, an import, makes it read again). A query fewer for every freeze.
  const next = cachedRows(driver, 'ledger', (accountId) => driver.prepare('SELECT coalesce(max(n), 0) + 1 FROM ledger WHERE account_id = ?').get(accountId), {
    derive: (row) => Number(row[0]),
  });
  const nextNumber = (accountId: string): number => next.derived(accountId) as number;
  const insert = (id: number | null, n: number, entry: Omit<LedgerEntry, 'id' | 'n'>): number =>
    driver
      .prepare('INSERT INTO ledger (id, account_id, n, kind, milli, body) VALUES (?, ?, ?, ?, ?, ?)')
      .run(id, entry.account_id, n, entry.kind, milli(entry.points), JSON.stringify(entry)).lastInsertRowid;
  return {
    append(entry) {
      // The id is the row's own (the next after the largest); id and number are kept out of the JSON, put back on read.
      const n = nextNumber(entry.account_id);
      let id = 0;
      next.wrote(entry.account_id, () => {
        id = insert(null, n, entry);
        return [n + 1];
      });
      return { id, n, ...entry };
    },
    restore: ({ id, n, ...entry }) => void insert(id, n ?? nextNumber(entry.account_id), entry),
    ofAccount: (accountId) => entries(driver.prepare(`SELECT id, n, body FROM ${ledger} WHERE account_id = ? ORDER BY n`).all(accountId)),
    page: (accountId, { after = 0, limit }) =>
      entries(driver.prepare(`SELECT id, n, body FROM ${ledger} WHERE account_id = ? AND n > ? ORDER BY n LIMIT ?`).all(accountId, after, Math.max(0, limit))),
    count: (accountId) => Number(driver.prepare(`SELECT count(*) FROM ${ledger} WHERE account_id = ?`).get(accountId)?.[0]),
    after: (id, limit) => entries(driver.prepare(`SELECT id, n, body FROM ${ledger} WHERE id > ? ORDER BY id LIMIT ?`).all(id, limit)),
    lastId: () => Number(driver.prepare('SELECT coalesce(max(id), 0) FROM ledger').get()?.[0]),
    sums() {
      const sums = new Map<string, Record<LedgerKind, bigint>>();
      for (const [account, kind, total] of driver.prepare('SELECT account_id, kind, sum(milli) FROM ledger GROUP BY account_id, kind').all()) {
        const entry = sums.get(account as string) ?? { fund: 0n, freeze: 0n, charge: 0n, refund: 0n, collect: 0n };
        entry[kind as LedgerKind] = BigInt(total as number);
        sums.set(account as string, entry);
      }
      return sums;
    },
  };
}
