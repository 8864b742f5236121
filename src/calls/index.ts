export type { CallRecord, CallDetails, InjectedFault, TextAnswer } from './call-record.ts';
export { keepRecordsFor30Days, RECORD_RETENTION_MS } from './retention.ts';
export { callsRepo } from './records.ts';
export type { CallsRepo, CallFilter } from './records.ts';
export { errorParts, recordedHeaders, targetParts } from './request-parts.ts';
