export type { CallRecord, CallDetails } from './records.ts';
