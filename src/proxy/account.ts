import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/**
 * The account a request acts for, as far as the proxy can tell without asking the service: its API key (the
 * bearer token, or `x-api-key` on the Messages endpoint), one history per key. Kept only as a short hash, so no
 * key is ever held in clear or shown in a report; null when the request carries none (the service refuses it).
 * @see reference "Authentication" 1
 */
export function accountOf(headers: IncomingHttpHeaders | Readonly<Record<string, string>>): string | null {
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(String(headers['authorization'] ?? ''))?.[1];
  const key = bearer ?? String(headers['x-api-key'] ?? '').trim();
  if (key === '') return null;
  return `key_${createHash('sha256').update(key).digest('hex').slice(0, 16)}`;
}
