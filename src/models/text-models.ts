import { readFileSync } from 'node:fs';
import type { Points } from '../billing/index.ts';

/**
 * A text-dialogue model and its prices in points per million tokens. The reference names none, so the
 * emulator's are in fixtures/text-models.json, read by the text endpoints and `GET /v1/pricing` alike.
 */
export interface TextModel {
  id: string;
  capability: string;
  input_per_million: Points;
  output_per_million: Points;
  context_tokens: number;
  /** Used when a call gives no maximum. */
  default_max_tokens: number;
  /** A larger maximum is refused with 422. */
  max_output_tokens: number;
}

const TEXT_MODELS_FILE = new URL('../../fixtures/text-models.json', import.meta.url);

export function loadTextModels(file: URL | string = TEXT_MODELS_FILE): TextModel[] {
  return (JSON.parse(readFileSync(file, 'utf8')) as { models: TextModel[] }).models;
}
