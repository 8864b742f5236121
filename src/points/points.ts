import Big from 'big.js';
import { rounded } from './decimal.ts';

/**
 * Points are exact decimals, written with exactly three places (`40.000`). They are never floats: every sum
 * and product goes through big.js, and amounts are rounded half-up to the thousandth only when written.
 * @see reference "Conventions": Points
 */
export type Points = string;

export function toPoints(value: string | number): Points {
  return rounded(new Big(value));
}

export const ZERO: Points = '0.000';

export const add = (a: Points, b: Points): Points => rounded(new Big(a).plus(b));
export const sub = (a: Points, b: Points): Points => rounded(new Big(a).minus(b));
export const mul = (a: Points | number, b: Points | number): Points => rounded(new Big(a).times(b));
export const cmp = (a: Points, b: Points): -1 | 0 | 1 => new Big(a).cmp(b);
export const isNegative = (a: Points): boolean => new Big(a).lt(0);
