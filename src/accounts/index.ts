export { createAccount, createKey, findAccount, accountForKey, move } from './accounts.ts';
export type { NewAccount } from './accounts.ts';
export { seedStore, readSeed, isEmpty } from './seed.ts';
