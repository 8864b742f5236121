export { DEFAULT_LIMITS, judge, VERDICT_CHECKS } from './judge.ts';
export type { Verdict } from './judge.ts';
export { bodyDigest, bodyDigester, createClientLog, DEFAULT_LOG_SIZE } from './log.ts';
export type { BodyDigester, ClientLogStore } from './log.ts';
export { verdictJunitXml } from './junit.ts';
export { ACKNOWLEDGED_KINDS, RECEIVER_RULES } from './receiver-checks.ts';
export type { ReceiverDelivery, ReceiverEffect, ReceiverHistory, ReceiverKind, ReceiverRule } from './receiver-checks.ts';
export type { CheckResult, CheckStatus, ClientLog, ClientRequest, DeliveryKind, ReceiverAnswer, VerdictLimits } from './types.ts';
