import { applyMovement, toPoints, ZERO } from '../billing/index.ts';
import type { LedgerKind, Points } from '../billing/index.ts';
import { formatTime } from '../clock/index.ts';
import { ApiError } from '../errors/index.ts';
import { ids } from '../random/index.ts';
import type { Random } from '../random/index.ts';
import type { StoreData, StoredAccount, StoredKey } from '../store/index.ts';
import { entry } from '../store/index.ts';

export interface NewAccount {
  id?: string;
  points?: Points;
  webhook_url?: string | null;
  webhook_secret?: string;
}

/** Creates an account, funding it through the ledger so `funded = available + frozen + charged` holds. */
export function createAccount(data: StoreData, random: Random, nowMs: number, spec: NewAccount): StoredAccount {
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
  data.accounts[id] = account;
  const points = toPoints(spec.points ?? ZERO);
  if (points !== ZERO) move(data, id, { kind: 'fund', points, atMs: nowMs });
  // The stored one, not `account`: changes through it are tracked (see store/changes.ts).
  return data.accounts[id] as StoredAccount;
}

export function createKey(data: StoreData, random: Random, nowMs: number, accountId: string, key?: string): StoredKey {
  const record: StoredKey = { key: key ?? ids.apiKey(random), account_id: accountId, created_at: formatTime(nowMs) };
  data.keys[record.key] = record;
  return data.keys[record.key] as StoredKey;
}

export function findAccount(data: StoreData, id: string): StoredAccount {
  const account = entry(data.accounts, id);
  if (!account) throw new ApiError('not_found', `No account '${id}'.`);
  return account;
}

/** The account a key belongs to, or undefined for a missing or unknown key. */
export function accountForKey(data: StoreData, key: string): StoredAccount | undefined {
  const record = entry(data.keys, key);
  return record ? data.accounts[record.account_id] : undefined;
}

export interface Move {
  kind: LedgerKind;
  points: Points;
  atMs: number;
  /** What the points are for: a task, or a text call (by its request id). */
  taskId?: string | null;
  callId?: string | null;
  /** A settlement collecting more than was frozen may take the balance below zero. */
  overdraw?: boolean;
}

/**
 * Moves points on an account and writes the ledger entry. Throws (insufficient_points on a freeze) before
 * changing anything.
 */
export function move(data: StoreData, accountId: string, m: Move): void {
  const account = findAccount(data, accountId);
  const next = applyMovement(account, m.kind, m.points, m.overdraw ?? false);
  account.available = next.available;
  account.frozen = next.frozen;
  account.charged = next.charged;
  data.seq += 1;
  data.ledger.push({
    id: data.seq,
    account_id: accountId,
    kind: m.kind,
    points: m.points,
    task_id: m.taskId ?? null,
    ...(m.callId ? { call_id: m.callId } : {}),
    at: formatTime(m.atMs),
  });
}
