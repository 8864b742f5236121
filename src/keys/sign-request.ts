import { randomBytes } from 'node:crypto';
import { canonicalRequest, requestSignature } from './signature.ts';

export interface SignRequestOptions {
  /** The key's signing secret (`svs_…`), from the control API. */
  secret: string;
  method: string;
  /** Path with query, as sent: `/v1/tasks?limit=5`. */
  path: string;
  /** The exact bytes sent (a string is taken as UTF-8); omit for none. */
  body?: Uint8Array | string;
  /** Unix seconds; default: now. */
  timestamp?: number;
  nonce?: string;
}

/**
 * The three signing headers for a request of a key with signing on, for clients and tests:
 * `fetch(url, { method, body, headers: { ...signRequest({ secret, method, path, body }), Authorization } })`.
 */
export function signRequest(options: SignRequestOptions): Record<'X-Svc-Timestamp' | 'X-Svc-Nonce' | 'X-Svc-Signature', string> {
  const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000));
  const nonce = options.nonce ?? randomBytes(16).toString('hex');
  const canonical = canonicalRequest(timestamp, nonce, options.method, options.path, options.body ?? '');
  return { 'X-Svc-Timestamp': timestamp, 'X-Svc-Nonce': nonce, 'X-Svc-Signature': requestSignature(options.secret, canonical) };
}
