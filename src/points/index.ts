// Points and prices as pure arithmetic, apart from the ledger's records: the contract-test kit (src/observed) and
// the contract's shapes import this folder, and must load where the store's native binding cannot.
export { toPoints, add, sub, mul, cmp, isNegative, ZERO } from './points.ts';
export type { Points } from './points.ts';
export { freezeAmount } from './freeze.ts';
export type { PriceRule } from './freeze.ts';
export { chargeFor, tokensPerSecond } from './settle.ts';
export type { ActualUsage } from './settle.ts';
export { tokenPoints } from './tokens.ts';
