export { createAccount, createKey, findAccount, accountForKey, move } from './accounts.ts';
export type { NewAccount, Move } from './accounts.ts';
export { seedStore, readSeed, isEmpty } from './seed.ts';
export type { StoredAccount, StoredKey, AccountsRepo, KeysRepo } from './records.ts';
