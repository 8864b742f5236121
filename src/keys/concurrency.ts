import { ApiError } from '../errors/index.ts';

/**
 * Running work per key and per account: tasks queued or processing, plus text calls in flight. Counted as work
 * starts and ends, and rebuilt from the store after a start or reset.
 * @see reference "Limits": concurrency per key and per account; 429 concurrency_limited
 */
export interface Concurrency {
  /** 429 concurrency_limited if one more would go over the key's or the account's cap. */
  check(key: string, keyCap: number | null, accountId: string, accountCap: number | null): void;
  start(key: string | null, accountId: string): void;
  end(key: string | null, accountId: string): void;
  /** Counts again from how many unfinished tasks each key and account holds (after a start or a reset). */
  rebuild(holders: readonly { key: string | null; account_id: string; count: number }[]): void;
  running(of: { key?: string; accountId?: string }): number;
}

export function createConcurrency(): Concurrency {
  const byKey = new Map<string, number>();
  const byAccount = new Map<string, number>();
  const bump = (map: Map<string, number>, id: string, by: number): void => {
    const n = (map.get(id) ?? 0) + by;
    if (n <= 0) map.delete(id);
    else map.set(id, n);
  };
  const api: Concurrency = {
    check(key, keyCap, accountId, accountCap) {
      if (keyCap !== null && (byKey.get(key) ?? 0) >= keyCap) {
        throw new ApiError('concurrency_limited', `This key already runs ${keyCap} tasks and text calls, its cap.`);
      }
      if (accountCap !== null && (byAccount.get(accountId) ?? 0) >= accountCap) {
        throw new ApiError('concurrency_limited', `This account already runs ${accountCap} tasks and text calls, its cap.`);
      }
    },
    start(key, accountId) {
      if (key !== null) bump(byKey, key, 1);
      bump(byAccount, accountId, 1);
    },
    end(key, accountId) {
      if (key !== null) bump(byKey, key, -1);
      bump(byAccount, accountId, -1);
    },
    rebuild(holders) {
      byKey.clear();
      byAccount.clear();
      for (const { key, account_id, count } of holders) {
        if (key !== null) bump(byKey, key, count);
        bump(byAccount, account_id, count);
      }
    },
    running: ({ key, accountId }) => (key !== undefined ? (byKey.get(key) ?? 0) : (byAccount.get(accountId ?? '') ?? 0)),
  };
  return api;
}
