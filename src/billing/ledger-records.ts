import Big from 'big.js';
import type { Store } from '../store/index.ts';
import type { SqlValue } from '../store/index.ts';
import type { LedgerEntry, LedgerKind } from './ledger.ts';
import type { Points } from './points.ts';

export interface LedgerRepo {
  /** Writes an entry under the next id. */
  append(entry: Omit<LedgerEntry, 'id'>): LedgerEntry;
  /** Writes an entry under its own id (a state import). */
  restore(entry: LedgerEntry): void;
  /** One account's entries, oldest first. */
  ofAccount(accountId: string): LedgerEntry[];
  /** Entries after `id`, oldest first. */
  after(id: number, limit: number): LedgerEntry[];
  lastId(): number;
  /** Per account, the sum of each kind in thousandths of a point (exact integers). */
  sums(): Map<string, Record<LedgerKind, bigint>>;
}

const entries = (rows: SqlValue[][]): LedgerEntry[] =>
  rows.map(([id, body]) => ({ id: Number(id), ...(JSON.parse(body as string) as Omit<LedgerEntry, 'id'>) }));

/** Points as an integer number of thousandths, for exact sums in SQL. */
const milli = (points: Points): number => Number(new Big(points).times(1000).toFixed(0));

export function ledgerRepo(store: Store): LedgerRepo {
  const { driver } = store;
  return {
    append(entry) {
      // The id is the row's own (the next after the largest), kept out of the JSON and put back on read.
      const { lastInsertRowid } = driver
        .prepare('INSERT INTO ledger (account_id, kind, milli, body) VALUES (?, ?, ?, ?)')
        .run(entry.account_id, entry.kind, milli(entry.points), JSON.stringify(entry));
      return { id: lastInsertRowid, ...entry };
    },
    restore: ({ id, ...entry }) =>
      void driver
        .prepare('INSERT INTO ledger (id, account_id, kind, milli, body) VALUES (?, ?, ?, ?, ?)')
        .run(id, entry.account_id, entry.kind, milli(entry.points), JSON.stringify(entry)),
    ofAccount: (accountId) => entries(driver.prepare('SELECT id, body FROM ledger WHERE account_id = ? ORDER BY id').all(accountId)),
    after: (id, limit) => entries(driver.prepare('SELECT id, body FROM ledger WHERE id > ? ORDER BY id LIMIT ?').all(id, limit)),
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
