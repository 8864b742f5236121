export { createControl, knownOf, versionOf } from './control/index.ts';
export type {
  Control,
  ControlDeps,
  StateCounts,
  StateOps,
  ListPage,
  PageQuery,
  NewAccountInput,
  LedgerQuery,
  TaskListQuery,
  DeliveryListQuery,
  RecordListQuery,
  ClockView,
  Health,
  TaskEntry,
  ProbeRequest,
  ProbeResponse,
  VerdictDeps,
  VerdictFilter,
} from './control/index.ts';
export { createApi, MAX_UPLOAD_BYTES } from './api/index.ts';
export type { Api, ApiDeps, Caller, SubmitRequest, Upload, StreamStep, TextRequest, TextRun } from './api/index.ts';
export { lifecycleOf, releaseWhenTaskEnds, stampClockOnCommit } from './lifecycle/index.ts';
export type { Lifecycle, Part } from './lifecycle/index.ts';
