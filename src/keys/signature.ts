import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The emulator's request signing scheme (the reference requires the headers but does not show the scheme):
 *
 *   X-Svc-Timestamp: Unix seconds
 *   X-Svc-Nonce:     8 to 64 visible characters, never reused within the tolerance
 *   X-Svc-Signature: v1=<hex HMAC-SHA256 with the key's signing secret over the canonical string>
 *
 * canonical string = timestamp \n nonce \n METHOD \n path with query \n hex SHA-256 of the raw body (empty: of "")
 */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

export function canonicalRequest(timestamp: string, nonce: string, method: string, path: string, body: Uint8Array | string): string {
  const digest = createHash('sha256').update(body).digest('hex');
  return `${timestamp}\n${nonce}\n${method.toUpperCase()}\n${path}\n${digest}`;
}

export function requestSignature(secret: string, canonical: string): string {
  return `v1=${createHmac('sha256', secret).update(canonical).digest('hex')}`;
}

export function signaturesMatch(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
