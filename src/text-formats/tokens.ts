/**
 * The emulator's token arithmetic. There is no real tokenizer: a believable count is enough, as long as it is
 * deterministic and the same everywhere (freeze, stream, usage, settlement).
 */

/** Tokens of a prompt: about one per 4 characters, plus 3 per message for the roles and separators. */
export function countInputTokens(texts: string[]): number {
  const chars = texts.reduce((sum, text) => sum + codePoints(text), 0);
  return Math.ceil(chars / 4) + 3 * Math.max(1, texts.length);
}

/**
 * The code points of a text, as `[...text].length` counts them (a surrogate pair is one, a lone surrogate one),
 * without building that array: for a 20 MB prompt it was a string per character, 300 MB to 1 GB and a second.
 */
function codePoints(text: string): number {
  if (!SURROGATE.test(text)) return text.length;
  let pairs = 0;
  for (let i = 0; i < text.length - 1; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0xd800 || unit > 0xdbff) continue;
    const next = text.charCodeAt(i + 1);
    if (next >= 0xdc00 && next <= 0xdfff) {
      pairs++;
      i++;
    }
  }
  return text.length - pairs;
}

const SURROGATE = /[\ud800-\udfff]/;

/** Splits generated text into the pieces streamed and counted as output tokens: each word with its leading space. */
export function toPieces(text: string): string[] {
  return text.match(/\s*\S+/g) ?? [];
}
