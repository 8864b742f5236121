// `svc-emulator receiver-check` and `checkReceiver`: a battery of real callbacks sent to any receiver, its answers
// judged by the receiver rules the verdict shares (src/verdict). Part of the contract-test kit: nothing here loads
// the emulator's store.
export { checkReceiver, planRun } from './run.ts';
export type { Plan } from './run.ts';
export { chosenChecks, DEFAULT_SLOW_BODY_MS, ReceiverCheckOptionError, resolveOptions } from './options.ts';
export type { CheckReceiverOptions, ResolvedOptions } from './options.ts';
export { receiverJunitXml, reportLines, scrub } from './report.ts';
export type { DeliveryEvidence, ReceiverCheckReport, ReceiverCheckResult } from './report.ts';
export { ReceiverUnreachable } from './send.ts';
export { describePlan } from './dry-run.ts';
