import { createHash } from 'node:crypto';
import type { ClientLog, ClientRequest, ReceiverAnswer } from './types.ts';

/** The most requests (and callback answers) kept: a verdict judges a test run, not a day of traffic. */
export const DEFAULT_LOG_SIZE = 10_000;

export interface ClientLogStore {
  request(entry: ClientRequest): void;
  callback(entry: ReceiverAnswer): void;
  /** What a verdict judges: everything, or one key's requests, or one account's requests and callbacks. */
  select(filter: { key?: string | undefined; account?: string | undefined }): ClientLog;
  clear(): void;
}

/** The log of what clients did, oldest dropped first once `size` is reached. */
export function createClientLog(size = DEFAULT_LOG_SIZE): ClientLogStore {
  let requests: ClientRequest[] = [];
  let callbacks: ReceiverAnswer[] = [];
  const bounded = <T>(list: T[], entry: T): T[] => {
    list.push(entry);
    return list.length > size ? list.slice(list.length - size) : list;
  };
  return {
    request(entry) {
      requests = bounded(requests, entry);
    },
    callback(entry) {
      callbacks = bounded(callbacks, entry);
    },
    select({ key, account }) {
      return {
        requests: requests.filter((r) => (key === undefined || r.key === key) && (account === undefined || r.account === account)),
        // A key's client has no receiver of its own: callbacks go to its account's addresses.
        callbacks: callbacks.filter((c) => account === undefined || c.account === account),
      };
    },
    clear() {
      requests = [];
      callbacks = [];
    },
  };
}

/**
 * A body's digest for telling one request from another: JSON with its keys sorted (a client that builds the same
 * object again may order it differently), other bytes as they are.
 */
export function bodyDigest(body: Buffer | string | null | undefined): string {
  if (body === null || body === undefined || body.length === 0) return '';
  const text = typeof body === 'string' ? body : body.toString('utf8');
  let canonical = text;
  try {
    canonical = JSON.stringify(sorted(JSON.parse(text)));
  } catch {
    // Not JSON: the bytes themselves.
  }
  return createHash('sha256').update(canonical).digest('base64url').slice(0, 22);
}

function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.keys(value).sort().map((k) => [k, sorted((value as Record<string, unknown>)[k])]));
  }
  return value;
}
