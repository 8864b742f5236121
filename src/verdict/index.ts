export { DEFAULT_LIMITS, judge, VERDICT_CHECKS } from './judge.ts';
export type { Verdict } from './judge.ts';
export type { CheckResult, CheckStatus, ClientLog, ClientRequest, DeliveryKind, ReceiverAnswer, VerdictLimits } from './types.ts';
