export type { CallRecord, CallDetails } from './records.ts';
export { keepRecordsFor30Days, RECORD_RETENTION_MS } from './retention.ts';
export type { CallsRepo, CallFilter } from './store.ts';
