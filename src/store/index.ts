export { openStore } from './store.ts';
export type { Store, StoreOptions, StoreStats } from './store.ts';
export { loadStoreFile, StoreFileError } from './log-file.ts';
export { emptyData, SCHEMA_VERSION } from './schema.ts';
export type { StoreData, StoredAccount, StoredKey, StoredTask, StoredFile, StoredDelivery, DeliveryAttempt, DeliveryType, IdempotencyRecord } from './schema.ts';
export { entry } from './lookup.ts';
export { dataIdentity } from './changes.ts';
export { sweepHourly } from './oldest-first.ts';
export type { ArrivalOrder, Verdict } from './oldest-first.ts';
