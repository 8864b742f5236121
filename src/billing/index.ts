// The ledger and its records. Points and prices (the arithmetic) are src/points, a leaf the kit can load.
export { applyMovement } from './ledger.ts';
export type { LedgerEntry, LedgerKind, Balances } from './ledger.ts';
export { ledgerRepo } from './records.ts';
export type { LedgerRepo, RestoredEntry } from './records.ts';
