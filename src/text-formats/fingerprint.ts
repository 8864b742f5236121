import { createHash } from 'node:crypto';
import { chatFormat } from './chat.ts';
import { messagesFormat } from './messages.ts';
import { responsesFormat } from './responses.ts';
import type { TextFormat } from './types.ts';

const FORMATS: Record<string, TextFormat> = { '/v1/chat/completions': chatFormat, '/v1/responses': responsesFormat, '/v1/messages': messagesFormat };

/** The text format of a request path (`/v1/chat/completions`, with or without a query), or null. */
export const textFormatOf = (path: string): TextFormat | null => FORMATS[path.split('?')[0] ?? ''] ?? null;

/**
 * What makes two text calls the same call for a recorded answer: the format and what the answer depends on (model,
 * every prompt text in order, stop sequences, seed, response format, forced tool, requested maximum), not how it
 * is delivered (`stream`, `stream_options`) nor where the prompt's texts sit in the body. `sha256:` and 64 hex digits.
 * A body the format cannot read (not a checked request) has none: null.
 */
export function textFingerprint(format: TextFormat, body: unknown): string | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null;
  let parsed;
  try {
    parsed = format.parse(body as Record<string, unknown>);
  } catch {
    return null;
  }
  const { model, prompt, stop, seed, responseFormat, forcedTool } = parsed.request;
  if (typeof model !== 'string' || !Array.isArray(prompt)) return null;
  const normalized = canonical([format.name, model, prompt, stop, seed, responseFormat, forcedTool, parsed.requestedMax]);
  return `sha256:${createHash('sha256').update(normalized).digest('hex')}`;
}

/** JSON with object keys sorted, so key order in the request does not change the fingerprint. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}
