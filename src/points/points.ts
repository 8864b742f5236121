import Big from 'big.js';

/**
 * Points are exact decimals, written with exactly three places (`40.000`). They are never floats: every sum
 * and product goes through big.js, and amounts are rounded half-up to the thousandth only when written.
 * @see reference "Conventions": Points
 */
export type Points = string;

export function toPoints(value: Big | string | number): Points {
  return new Big(value).round(3, Big.roundHalfUp).toFixed(3);
}

export const ZERO: Points = '0.000';

export const add = (a: Points, b: Points): Points => toPoints(new Big(a).plus(b));
export const sub = (a: Points, b: Points): Points => toPoints(new Big(a).minus(b));
export const mul = (a: Points | number, b: Points | number): Points => toPoints(new Big(a).times(b));
export const cmp = (a: Points, b: Points): -1 | 0 | 1 => new Big(a).cmp(b);
export const isNegative = (a: Points): boolean => new Big(a).lt(0);
