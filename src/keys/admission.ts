import { cmp, sub } from '../points/index.ts';
import type { Points } from '../points/index.ts';
import type { Store } from '../store/index.ts';
import { ApiError } from '../errors/index.ts';
import type { AccountsRepo, KeysRepo, StoredAccount, StoredKey } from '../accounts/index.ts';
import type { Concurrency } from './concurrency.ts';
import { periodStart } from './periods.ts';
import { giveBackQuota, takeQuota } from './quota.ts';

/** Who is asking for work to start: the key (null for work the emulator starts itself) and its account. */
export interface Admission {
  key: StoredKey | null;
  account: StoredAccount;
  concurrency: Concurrency;
  nowMs: number;
  db: { store: Store; keys: KeysRepo; accounts: AccountsRepo };
}

/**
 * The last checks before work starts, in the documented order: the key's quota (402 key_quota_exceeded), the
 * account's points (402 insufficient_points), the key's and account's concurrency (429 concurrency_limited).
 * Nothing is taken until all pass; the caller then freezes and calls `started()` inside its transaction (the
 * quota is written with it; the work counts toward concurrency once it commits).
 */
export function admit(admission: Admission, points: Points): { started: () => void } {
  const { db, nowMs } = admission;
  // As stored now, inside the caller's transaction: what the request read when it was authenticated may be old.
  const account = db.accounts.get(admission.account.id) ?? admission.account;
  const key = admission.key ? (db.keys.get(admission.key.key) ?? admission.key) : null;
  // A copy: the quota is only checked here, and taken once everything has passed.
  if (key) takeQuota({ ...key }, points, nowMs);
  if (cmp(account.available, points) < 0) {
    throw new ApiError(
      'insufficient_points',
      `This call needs ${points} points; ${account.available} are available. Nothing was frozen.`,
    );
  }
  admission.concurrency.check(key?.key ?? '', key?.settings?.concurrency ?? null, account.id, account.concurrency ?? null);
  return {
    started() {
      // A key without a quota has nothing to write: its record is as it was.
      if (key?.settings?.quota) {
        takeQuota(key, points, nowMs);
        db.keys.put(key);
      }
      db.store.afterCommit(() => admission.concurrency.start(key?.key ?? null, account.id));
    },
  };
}

/**
 * When work ends: it stops counting toward concurrency, and the quota keeps only what was charged. A quota
 * period that is over stays as it was: what was taken in it is neither given back to nor collected from a later
 * one.
 */
export function finished(
  db: { store: Store; keys: KeysRepo },
  concurrency: Concurrency,
  key: StoredKey | null | undefined,
  accountId: string,
  taken: { points: Points; atMs: number },
  charged: Points,
  nowMs: number,
): void {
  db.store.afterCommit(() => concurrency.end(key?.key ?? null, accountId));
  const quota = key?.settings?.quota;
  if (!key || !quota || periodStart(quota.period, taken.atMs) !== periodStart(quota.period, nowMs)) return;
  if (cmp(taken.points, charged) > 0) giveBackQuota(key, sub(taken.points, charged), nowMs);
  // A settlement beyond the freeze is collected whatever the quota says, and counts against it.
  else if (cmp(charged, taken.points) > 0) takeQuota(key, sub(charged, taken.points), nowMs, true);
  else return;
  db.keys.put(key);
}
