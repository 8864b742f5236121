import { createHash } from 'node:crypto';
import { errorOf, parseJson } from '../wire/index.ts';
import type { Exchange } from '../wire/index.ts';
import type { AnswerObservation } from './history.ts';
import { isRecord } from './task-view.ts';

/** A short, stable name of an API key: the same key, the same name; the key cannot be read back from it. */
export const keyName = (key: string): string => `key_${createHash('sha256').update(key).digest('hex').slice(0, 16)}`;

/** What one exchange shows the wire rules. */
export function observeAnswer(exchange: Exchange, sentMs: number, receivedMs: number): AnswerObservation {
  const header = (name: string): string | null => exchange.headers.get(name);
  const { code } = errorOf(exchange);
  return {
    requestId: exchange.requestId,
    method: exchange.method.toUpperCase(),
    path: exchange.path.split('?')[0] ?? exchange.path,
    status: exchange.status,
    code: code ?? null,
    headers: { retryAfter: header('retry-after'), cacheControl: header('cache-control'), accelBuffering: header('x-accel-buffering'), contentType: header('content-type') },
    key: keyOf(exchange.requestHeaders),
    body: bodyOf(exchange.requestBody),
    sentMs,
    receivedMs,
  };
}

function keyOf(headers: Readonly<Record<string, string>>): AnswerObservation['key'] {
  const find = (name: string): string | undefined => Object.entries(headers).find(([n]) => n.toLowerCase() === name)?.[1];
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(find('authorization') ?? '')?.[1];
  if (bearer !== undefined) return { id: keyName(bearer), via: 'bearer' };
  const key = (find('x-api-key') ?? '').trim();
  return key === '' ? null : { id: keyName(key), via: 'x-api-key' };
}

function bodyOf(text: string | undefined): AnswerObservation['body'] {
  if (text === undefined || text === '') return { kind: 'none' };
  const json = parseJson(text);
  return isRecord(json) ? { kind: 'object', fields: Object.keys(json) } : { kind: 'other' };
}
