import { createHash } from 'node:crypto';
import type { Hash } from 'node:crypto';
import type { ClientLog, ClientRequest, ReceiverAnswer } from './types.ts';

/** The most requests (and callback answers) kept: a verdict judges a test run, not a day of traffic. */
export const DEFAULT_LOG_SIZE = 10_000;

/**
 * An entry whose body's digest and steering are worked out only when a verdict first selects it (`identity`,
 * then let go): a submit's digest parses and sorts its body, a tenth of a submit's time, on a path where nobody
 * asks for it yet. Until then `bodyDigest` and `steering` hold nothing.
 */
export type RequestLater = ClientRequest & { identity?: (() => Pick<ClientRequest, 'bodyDigest' | 'steering'>) | undefined };

export interface ClientLogStore {
  request(entry: RequestLater): void;
  callback(entry: ReceiverAnswer): void;
  /**
   * What a verdict judges: everything; or one key's requests and the callbacks of the accounts it authenticated
   * as; or one account's requests and callbacks.
   */
  select(filter: { key?: string | undefined; account?: string | undefined }): ClientLog;
  clear(): void;
}

/** The log of what clients did, oldest dropped first once `size` is reached. */
export function createClientLog(size = DEFAULT_LOG_SIZE): ClientLogStore {
  let requests: RequestLater[] = [];
  let callbacks: ReceiverAnswer[] = [];
  // Trimmed once twice the size is reached, not on every entry past it: one entry costs the same whatever the size.
  const bounded = <T>(list: T[], entry: T): T[] => {
    list.push(entry);
    return list.length >= 2 * size ? list.slice(list.length - size) : list;
  };
  const newest = <T>(list: T[]): T[] => (list.length > size ? list.slice(list.length - size) : list);
  return {
    request(entry) {
      requests = bounded(requests, entry);
    },
    callback(entry) {
      callbacks = bounded(callbacks, entry);
    },
    select({ key, account }) {
      const chosen = newest(requests).filter((r) => (key === undefined || r.key === key) && (account === undefined || r.account === account));
      for (const r of chosen) identified(r);
      // A key's client has no receiver of its own: its callbacks are those of the accounts it authenticated as.
      const accounts = account !== undefined ? new Set([account]) : key !== undefined ? new Set(chosen.map((r) => r.account)) : null;
      return { requests: chosen, callbacks: newest(callbacks).filter((c) => accounts === null || accounts.has(c.account)) };
    },
    clear() {
      requests = [];
      callbacks = [];
    },
  };
}

function identified(entry: RequestLater): void {
  if (entry.identity === undefined) return;
  const { bodyDigest, steering } = entry.identity();
  entry.bodyDigest = bodyDigest;
  entry.steering = steering;
  entry.identity = undefined;
}

/** Larger bodies (a text call's images) are digested as sent: parsing them again for every request costs too much. */
export const CANONICAL_BODY_BYTES = 64 * 1024;

const digestOf = (canonical: Buffer | string): string => createHash('sha256').update(canonical).digest('base64url').slice(0, 22);

/** The digest bodyDigest gives the JSON text of `value`, for a body already parsed. */
export const jsonDigest = (value: unknown): string => digestOf(JSON.stringify(sorted(value)));

/**
 * A body's digest for telling one request from another: JSON with its keys sorted (a client that builds the same
 * object again may order it differently), other bytes (and bodies over 64 KB) as they are.
 */
export function bodyDigest(body: Buffer | string | null | undefined): string {
  if (body === null || body === undefined || body.length === 0) return '';
  if (body.length <= CANONICAL_BODY_BYTES) {
    try {
      return jsonDigest(JSON.parse(typeof body === 'string' ? body : body.toString('utf8')));
    } catch {
      // Not JSON: the bytes themselves.
    }
  }
  return digestOf(body);
}

/** bodyDigest worked out while a body arrives: fed its chunks in order, then given the body they made up. */
export interface BodyDigester {
  update(chunk: Uint8Array): void;
  digest(body: Buffer | undefined): string;
}

/**
 * A body over 64 KB is hashed a chunk at a time as it comes in, not at once when the request is over: 20 MB at
 * once held every other request for 20 ms. A smaller one is digested whole, as bodyDigest does; so is a body that
 * is not the bytes fed (an inflated one).
 */
export function bodyDigester(): BodyDigester {
  let held: Uint8Array[] = [];
  let fed = 0;
  let hash: Hash | null = null;
  let digest: string | null = null;
  return {
    update(chunk) {
      fed += chunk.length;
      if (hash) {
        hash.update(chunk);
        return;
      }
      held.push(chunk);
      if (fed <= CANONICAL_BODY_BYTES) return;
      hash = createHash('sha256');
      for (const part of held) hash.update(part);
      held = [];
    },
    digest(body) {
      if (!hash || body === undefined || body.length !== fed) return bodyDigest(body);
      digest ??= hash.digest('base64url').slice(0, 22);
      return digest;
    },
  };
}

function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.keys(value).sort().map((k) => [k, sorted((value as Record<string, unknown>)[k])]));
  }
  return value;
}
