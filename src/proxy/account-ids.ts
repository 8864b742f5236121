import { controlRequest } from '../conformance/index.ts';
import type { Admin } from '../conformance/index.ts';

/**
 * Which of the accounts the proxy follows (one per API key) are known to be different accounts of the service: the
 * isolation rule judges a key's reads against only those. Two keys may be one account's (a task of either is
 * visible through both), so without knowledge they are not held apart.
 */
export interface AccountIds {
  /** Learns the service account of a followed key (through the control API, once per key): resolves once known or unknowable. */
  learn(account: string, key: string): Promise<void>;
  /** The service showed the two apart: `reader`'s key was answered 404 for a task `creator`'s key created. */
  apart(reader: string, creator: string): void;
  /** Whether the two followed keys are of different accounts, as far as is known. */
  distinct(a: string, b: string): boolean;
}

/** Keys whose account is remembered at once; the oldest learned is forgotten first. */
const KEYS_KEPT = 1024;

/**
 * With the control API, each key's account as GET /_emulator/keys/{key} gives it; else (and for a key it does not
 * know) only what the service itself showed: a 404 not_found for a task another key created, which only another
 * account gets. Neither a key nor an account's secrets is ever logged.
 * @see reference "Authentication" 4 (tasks are visible only to the account that created them)
 */
export function createAccountIds(admin: Admin | null, timeoutMs: number): AccountIds {
  const ids = new Map<string, Promise<string | null>>();
  const known = new Map<string, string | null>();
  const pairs = new Set<string>();
  const pair = (a: string, b: string): string => (a < b ? `${a} ${b}` : `${b} ${a}`);

  const lookUp = async (account: string, key: string): Promise<string | null> => {
    const found = await controlRequest(admin as Admin, 'GET', `/_emulator/keys/${encodeURIComponent(key)}`, undefined, timeoutMs).catch(() => null);
    const id = (found?.json as { account_id?: unknown } | undefined)?.account_id;
    const accountId = found?.status === 200 && typeof id === 'string' ? id : null;
    known.set(account, accountId);
    if (known.size > KEYS_KEPT) known.delete(known.keys().next().value as string);
    return accountId;
  };

  return {
    async learn(account, key) {
      if (admin === null) return;
      let id = ids.get(account);
      if (!id) {
        id = lookUp(account, key);
        ids.set(account, id);
        if (ids.size > KEYS_KEPT) ids.delete(ids.keys().next().value as string);
      }
      await id;
    },
    apart(reader, creator) {
      if (reader === creator) return;
      pairs.add(pair(reader, creator));
      if (pairs.size > KEYS_KEPT * 8) pairs.delete(pairs.values().next().value as string);
    },
    distinct(a, b) {
      if (a === b) return false;
      const [x, y] = [known.get(a), known.get(b)];
      if (typeof x === 'string' && typeof y === 'string') return x !== y;
      return pairs.has(pair(a, b));
    },
  };
}
