export type { CallRecord, CallDetails } from './records.ts';
export { keepRecordsFor30Days, RECORD_RETENTION_MS } from './retention.ts';
