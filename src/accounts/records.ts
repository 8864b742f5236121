import type { Points } from '../points/index.ts';
import type { Store } from '../store/index.ts';
import { bodies, body, cachedRows, frozenBody } from '../store/index.ts';

export interface StoredAccount {
  id: string;
  available: Points;
  frozen: Points;
  charged: Points;
  webhook_url: string | null;
  webhook_secret: string;
  /** Running tasks plus text calls the account may have at once; null: no cap. */
  concurrency?: number | null;
  /** Secrets replaced by a rotation, still signing until `until_ms` (24 clock hours). */
  previous_secrets?: { secret: string; until_ms: number }[];
  created_at: string;
}

export interface StoredKey {
  key: string;
  account_id: string;
  created_at: string;
  settings?: KeySettings;
  quota_use?: QuotaUse;
}

/** @see reference "Limits": key quotas */
export type QuotaPeriod = 'daily' | 'weekly' | 'monthly';

/**
 * A key's settings, set when it is created or later through the control API (src/keys applies them).
 * @see reference "Authentication" 3 and "Limits"
 */
export interface KeySettings {
  /** Callable models; null: all. */
  models: string[] | null;
  quota: { points: Points; period: QuotaPeriod } | null;
  /** Requests per minute; null: no limit. */
  rpm: number | null;
  /** Running tasks plus text calls in flight; null: no limit. */
  concurrency: number | null;
  /** The secret of signed requests; null: signing off. */
  signing_secret: string | null;
}

/** What the key's quota has used in its current period: freezes count, refunds give back. */
export interface QuotaUse {
  period_start_ms: number;
  used: Points;
}

export interface AccountsRepo {
  get(id: string): StoredAccount | undefined;
  /** The account as stored, shared and frozen: for a reader that only looks (every request's authentication). */
  peek(id: string): Readonly<StoredAccount> | undefined;
  put(account: StoredAccount): void;
  /** Oldest first. */
  all(): StoredAccount[];
  count(): number;
}

export interface KeysRepo {
  get(key: string): StoredKey | undefined;
  /** The key as stored, shared and frozen: for a reader that only looks (every request's authentication). */
  peek(key: string): Readonly<StoredKey> | undefined;
  put(key: StoredKey): void;
  ofAccount(accountId: string): StoredKey[];
}

export function accountsRepo(store: Store): AccountsRepo {
  const { driver } = store;
  // Every authenticated request reads its account (and its key, below): from memory while the table is unchanged.
  const stored = cachedRows(driver, 'accounts', (id) => driver.prepare('SELECT body FROM accounts WHERE id = ?').get(id), { derive: frozenBody<StoredAccount> });
  return {
    get: (id) => body<StoredAccount>(stored.read(id)),
    peek: (id) => stored.derived(id),
    put(account) {
      const text = JSON.stringify(account);
      stored.wrote(account.id, () => {
        driver.prepare('INSERT INTO accounts (id, body) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET body = excluded.body').run(account.id, text);
        return [text];
      });
    },
    all: () => bodies<StoredAccount>(driver.prepare('SELECT body FROM accounts ORDER BY seq').all()),
    count: () => Number(driver.prepare('SELECT count(*) FROM accounts').get()?.[0] ?? 0),
  };
}

export function keysRepo(store: Store): KeysRepo {
  const { driver } = store;
  const stored = cachedRows(driver, 'keys', (key) => driver.prepare('SELECT body FROM keys WHERE key = ?').get(key), { derive: frozenBody<StoredKey> });
  return {
    get: (key) => body<StoredKey>(stored.read(key)),
    peek: (key) => stored.derived(key),
    put(key) {
      const text = JSON.stringify(key);
      stored.wrote(key.key, () => {
        driver.prepare('INSERT INTO keys (key, account_id, body) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET body = excluded.body').run(key.key, key.account_id, text);
        return [text];
      });
    },
    ofAccount: (accountId) => bodies<StoredKey>(driver.prepare('SELECT body FROM keys WHERE account_id = ? ORDER BY seq').all(accountId)),
  };
}
