export { createAccount, createKey, findAccount, accountForKey, move } from './accounts.ts';
export type { NewAccount, Move } from './accounts.ts';
export { seedStore, readSeed, isEmpty } from './seed.ts';
export { accountsRepo, keysRepo } from './records.ts';
export type { StoredAccount, StoredKey, AccountsRepo, KeysRepo, KeySettings, QuotaUse, QuotaPeriod } from './records.ts';
