import Big from 'big.js';

/**
 * A big.js result as points: rounded half-up to the thousandth, written with three places. Kept apart from the
 * exported functions so that no published declaration names a big.js type: a project that imports the package
 * compiles its types without @types/big.js (test/package/types.test.ts).
 */
export function rounded(value: Big): string {
  return value.round(3, Big.roundHalfUp).toFixed(3);
}
