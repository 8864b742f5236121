import Big from 'big.js';
import { rounded } from './decimal.ts';
import { toPoints } from './points.ts';
import type { Points } from './points.ts';

/**
 * A task model's price rule, as the OpenAPI document states it in `x-pricing` on the model's input schema.
 * @see reference "Model: social-notes-data" / "video-gen-2.0-fast" / "avatar-photo", Price
 */
export type PriceRule =
  | { rule: 'fixed'; points: string }
  | {
      rule: 'per_second';
      price_field: string;
      per_second: Record<string, string>;
      seconds_field?: string;
      estimate_seconds_per_material?: number;
      material_fields?: string[];
      round_seconds?: 'up';
      per_million_output_tokens?: Record<string, string>;
      settle_on_tokens_when_present?: string;
    };

/** Points frozen at submission for a normalized input. */
export function freezeAmount(rule: PriceRule, input: Record<string, unknown>): Points {
  if (rule.rule === 'fixed') return toPoints(rule.points);
  const tier = String(input[rule.price_field]);
  const perSecond = rule.per_second[tier];
  if (perSecond === undefined) throw new Error(`no per-second price for ${rule.price_field}=${tier}`);
  return rounded(new Big(perSecond).times(estimatedSeconds(rule, input)));
}

function estimatedSeconds(rule: Extract<PriceRule, { rule: 'per_second' }>, input: Record<string, unknown>): number {
  if (rule.seconds_field !== undefined) {
    const seconds = input[rule.seconds_field];
    if (typeof seconds !== 'number') throw new Error(`${rule.seconds_field} must be a number to price this task`);
    return seconds;
  }
  // Avatar videos are priced on the audio's length, unknown until generation: estimate each material.
  const materials = (rule.material_fields ?? []).filter((field) => input[field] !== undefined).length;
  return materials * (rule.estimate_seconds_per_material ?? 0);
}
