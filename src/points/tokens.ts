import Big from 'big.js';
import { rounded } from './decimal.ts';
import type { Points } from './points.ts';

/**
 * Points for a text call's tokens at prices per million tokens: what is frozen at the start (estimated input,
 * maximum output) and what is charged at the end (actual usage).
 * @see reference "Text billing" 1-3
 */
export function tokenPoints(
  prices: { input_per_million: Points; output_per_million: Points },
  inputTokens: number,
  outputTokens: number,
): Points {
  return rounded(
    new Big(prices.input_per_million).times(inputTokens).plus(new Big(prices.output_per_million).times(outputTokens)).div(1_000_000),
  );
}
