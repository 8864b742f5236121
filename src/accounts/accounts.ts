import { applyMovement } from '../billing/index.ts';
import { toPoints, ZERO } from '../points/index.ts';
import type { LedgerKind, LedgerRepo } from '../billing/index.ts';
import type { Points } from '../points/index.ts';
import { formatTime } from '../clock/index.ts';
import type { AccountsRepo, KeysRepo, StoredAccount, StoredKey } from './records.ts';
import { ApiError } from '../errors/index.ts';
import { ids } from '../random/index.ts';
import type { Random } from '../random/index.ts';

export interface NewAccount {
  id?: string;
  points?: Points;
  webhook_url?: string | null;
  webhook_secret?: string;
}

type Accounts = { accounts: AccountsRepo; ledger: LedgerRepo };

/** Creates an account, funding it through the ledger so `funded = available + frozen + charged` holds. */
export function createAccount(db: Accounts, random: Random, nowMs: number, spec: NewAccount): StoredAccount {
  const id = spec.id ?? ids.accountId(random);
  const account: StoredAccount = {
    id,
    available: ZERO,
    frozen: ZERO,
    charged: ZERO,
    webhook_url: spec.webhook_url ?? null,
    webhook_secret: spec.webhook_secret ?? ids.webhookSecret(random),
    created_at: formatTime(nowMs),
  };
  db.accounts.put(account);
  const points = toPoints(spec.points ?? ZERO);
  return points === ZERO ? account : move(db, id, { kind: 'fund', points, atMs: nowMs });
}

export function createKey(db: { keys: KeysRepo }, random: Random, nowMs: number, accountId: string, key?: string): StoredKey {
  const record: StoredKey = { key: key ?? ids.apiKey(random), account_id: accountId, created_at: formatTime(nowMs) };
  db.keys.put(record);
  return record;
}

export function findAccount(db: { accounts: AccountsRepo }, id: string): StoredAccount {
  const account = db.accounts.get(id);
  if (!account) throw new ApiError('not_found', `No account '${id}'.`);
  return account;
}

/** The account a key belongs to, or undefined for a missing or unknown key. */
export function accountForKey(db: { accounts: AccountsRepo; keys: KeysRepo }, key: string): StoredAccount | undefined {
  const record = db.keys.get(key);
  return record ? db.accounts.get(record.account_id) : undefined;
}

export interface Move {
  kind: LedgerKind;
  points: Points;
  atMs: number;
  /** What the points are for: a task, or a text call (by its request id). */
  taskId?: string | null;
  callId?: string | null;
}

/**
 * Moves points on an account and writes the ledger entry; returns the account as stored now. Throws
 * (insufficient_points on a freeze) before changing anything; a collect may take available below zero.
 */
export function move(db: Accounts, accountId: string, m: Move): StoredAccount {
  const account = findAccount(db, accountId);
  const moved = { ...account, ...applyMovement(account, m.kind, m.points) };
  db.accounts.put(moved);
  db.ledger.append({
    account_id: accountId,
    kind: m.kind,
    points: m.points,
    task_id: m.taskId ?? null,
    ...(m.callId ? { call_id: m.callId } : {}),
    at: formatTime(m.atMs),
  });
  return moved;
}
