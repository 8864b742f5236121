/**
 * The emulator's token arithmetic. There is no real tokenizer: a believable count is enough, as long as it is
 * deterministic and the same everywhere (freeze, stream, usage, settlement).
 */

/** Tokens of a prompt: about one per 4 characters, plus 3 per message for the roles and separators. */
export function countInputTokens(texts: string[]): number {
  const chars = texts.reduce((sum, text) => sum + [...text].length, 0);
  return Math.ceil(chars / 4) + 3 * Math.max(1, texts.length);
}

/** Splits generated text into the pieces streamed and counted as output tokens: each word with its leading space. */
export function toPieces(text: string): string[] {
  return text.match(/\s*\S+/g) ?? [];
}
