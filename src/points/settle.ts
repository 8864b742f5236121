import Big from 'big.js';
import type { PriceRule } from './freeze.ts';
import { rounded } from './decimal.ts';
import { toPoints } from './points.ts';
import type { Points } from './points.ts';

/** What a finished task actually used, as far as its price rule needs it. */
export interface ActualUsage {
  /**
   * Actual seconds, as they are (7.2, not 8): the audio (or finished video) of avatar-photo. The task reports
   * them unrounded in `output.duration`; only the charge rounds them, as the price rule says (`round_seconds`).
   */
  seconds?: number;
  /** Actual output tokens: video-gen-2.0-fast with reference videos. */
  output_tokens?: number;
}

/**
 * The points a succeeded task is charged. Fixed prices and plain video durations charge what was frozen;
 * reference videos settle on output tokens at the resolution's per-million price; avatar videos on whole
 * seconds (rounded up) of the actual audio or finished video.
 * @see reference "Model: video-gen-2.0-fast" Rules and "Model: avatar-photo" Price
 */
export function chargeFor(rule: PriceRule, input: Record<string, unknown>, actual: ActualUsage): Points {
  if (rule.rule === 'fixed') return toPoints(rule.points);
  const tier = String(input[rule.price_field]);
  const tokenField = rule.settle_on_tokens_when_present;
  if (tokenField !== undefined && hasItems(input[tokenField])) {
    const perMillion = rule.per_million_output_tokens?.[tier];
    if (perMillion === undefined || actual.output_tokens === undefined) {
      throw new Error(`settling ${tier} on tokens needs a per-million price and the actual output tokens`);
    }
    return rounded(new Big(perMillion).times(actual.output_tokens).div(1_000_000));
  }
  const perSecond = new Big(rule.per_second[tier] ?? 'NaN');
  if (rule.seconds_field !== undefined) return rounded(perSecond.times(Number(input[rule.seconds_field])));
  if (actual.seconds === undefined) throw new Error('settling by actual seconds needs them');
  const seconds = rule.round_seconds === 'up' ? Math.ceil(actual.seconds) : actual.seconds;
  return rounded(perSecond.times(seconds));
}

/**
 * Output tokens a video of `seconds` costs at the per-second price: per-second ÷ per-million × 1,000,000, as an
 * exact decimal string (not a Big: the published declarations name no big.js type).
 */
export function tokensPerSecond(rule: PriceRule, input: Record<string, unknown>): string {
  if (rule.rule !== 'per_second') return '0';
  const tier = String(input[rule.price_field]);
  return new Big(rule.per_second[tier] ?? 0).div(rule.per_million_output_tokens?.[tier] ?? 1).times(1_000_000).toFixed();
}

const hasItems = (value: unknown): boolean => Array.isArray(value) && value.length > 0;
