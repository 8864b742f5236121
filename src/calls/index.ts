export type { CallRecord, CallDetails, InjectedFault, RecordedBody, TextAnswer } from './call-record.ts';
export { MOST_BODY_BYTES, recordedBody } from './recorded-body.ts';
export type { SeenBody } from './recorded-body.ts';
export { keepRecordsFor30Days, RECORD_RETENTION_MS } from './retention.ts';
export { callsRepo } from './records.ts';
export type { CallsRepo, CallFilter } from './records.ts';
export { errorParts, recordedHeaders, targetParts } from './request-parts.ts';
