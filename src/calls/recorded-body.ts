import { isUtf8 } from 'node:buffer';
import { redactBody } from '../recording/index.ts';
import type { RecordedBody } from './call-record.ts';

/**
 * How much of a body a call record keeps with `--record-content`: the first 64 KiB, a text stream's events as
 * they were sent up to there. Enough to read and send again any usual call; a base64 image or a long stream is cut.
 */
export const MOST_BODY_BYTES = 64 * 1024;
/** Secrets are looked for this far past the cut too, so one that straddles it is masked whole before the cut. */
const SECRET_MARGIN = 512;

/** What was seen of a body: its first bytes (up to MOST_BODY_BYTES + SECRET_MARGIN) and how many bytes it had. */
export interface SeenBody {
  head: Buffer;
  /** Every byte of the body, when known (a body refused unread, or read only in part, may not say). */
  size: number | null;
  contentType: string | null;
  /** Not every byte was seen: the body was refused before it was read whole (413), or read only this far. */
  partial?: boolean;
}

/**
 * A body as a call record keeps it: its text, secrets masked as a recording masks them (src/recording redact.ts:
 * keys, signing and callback secrets, bearer tokens, passwords in addresses, secret-named query parameters), cut
 * at MOST_BODY_BYTES (`truncated`); a body that is not UTF-8 text is kept as its type and size only (`binary`).
 */
export function recordedBody(seen: SeenBody): RecordedBody {
  const { head, size, contentType } = seen;
  const truncated = seen.partial === true || head.length > MOST_BODY_BYTES;
  const base = { content_type: contentType, size, truncated };
  const window = head.subarray(0, charBoundary(head, MOST_BODY_BYTES + SECRET_MARGIN));
  if (!isUtf8(window)) return { ...base, omitted: 'binary' };
  const { text } = redactBody({ route: null, side: 'request', text: window.toString('utf8'), mimeType: contentType ?? '', keepContent: true });
  return { ...base, text: cutAt(text, MOST_BODY_BYTES) };
}

/** The text's first `bytes` bytes of UTF-8, never splitting a character. */
function cutAt(text: string, bytes: number): string {
  const encoded = Buffer.from(text, 'utf8');
  if (encoded.length <= bytes) return text;
  return encoded.subarray(0, charBoundary(encoded, bytes)).toString('utf8');
}

/** The largest length up to `at` that does not end inside a UTF-8 sequence. */
function charBoundary(bytes: Buffer, at: number): number {
  if (bytes.length <= at) return bytes.length;
  let end = at;
  // Continuation bytes are 10xxxxxx: back off to the byte that starts the character.
  while (end > 0 && end > at - 4 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return end;
}
