export { toPoints, add, sub, mul, cmp, isNegative, ZERO } from './points.ts';
export type { Points } from './points.ts';
export { applyMovement } from './ledger.ts';
export type { LedgerEntry, LedgerKind, Balances } from './ledger.ts';
export { freezeAmount } from './freeze.ts';
export type { PriceRule } from './freeze.ts';
export { chargeFor, tokensPerSecond } from './settle.ts';
export type { ActualUsage } from './settle.ts';
export { tokenPoints } from './tokens.ts';
