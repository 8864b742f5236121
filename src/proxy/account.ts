import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

type Headers = IncomingHttpHeaders | Readonly<Record<string, string>>;

/** The API key a request carries: the bearer token, or `x-api-key` on the Messages endpoint; null without one. */
export function keyOf(headers: Headers): string | null {
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(String(headers['authorization'] ?? ''))?.[1];
  const key = bearer ?? String(headers['x-api-key'] ?? '').trim();
  return key === '' ? null : key;
}

/**
 * The account a request acts for, as far as the proxy can tell without asking the service: its API key, one
 * history per key. Named only by a short hash, so no key is ever shown in a log line or a report; null when the
 * request carries none (the service refuses it).
 * @see reference "Authentication" 1
 */
export function accountOf(headers: Headers): string | null {
  const key = keyOf(headers);
  if (key === null) return null;
  return `key_${createHash('sha256').update(key).digest('hex').slice(0, 16)}`;
}
