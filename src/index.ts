/** The package's programmatic API: an emulator in-process for test suites. */
export { createEmulator } from './emulator/index.ts';
export type { Emulator, EmulatorInternals, EmulatorOptions, SessionHandle } from './emulator/index.ts';
export type { NewSession, SessionCreated, SessionView, SessionsControl } from './sessions/index.ts';
export { createClock, formatTime } from './clock/index.ts';
export type { Clock, ClockMode } from './clock/index.ts';
export { openStore } from './store/index.ts';
export type { Store } from './store/index.ts';
export { signRequest } from './keys/index.ts';
export type { SignRequestOptions } from './keys/index.ts';
export type {
  Control,
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
  StateCounts,
} from './service/index.ts';
// What `emulator.verdict()` and `control.verdict` answer and take, and the fault rules of `control.faults`.
export type { Verdict, CheckResult, CheckStatus, VerdictLimits } from './verdict/index.ts';
export type { VerdictFilter, ProbeRequest, ProbeResponse } from './service/index.ts';
export type { FaultFile, FaultRule, RuleInput, RequestMatch, RequestFault, CallbackMatch, CallbackFault } from './faults/index.ts';
export { checkReceiver, type CheckReceiverOptions, type ReceiverCheckReport } from './receiver-check/index.ts';
