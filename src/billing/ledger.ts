import { ApiError } from '../errors/index.ts';
import { add, cmp, sub } from './points.ts';
import type { Points } from './points.ts';

/**
 * The points ledger of one account as plain functions over balances and entries. Every movement is one entry,
 * so `funded = available + frozen + charged` can always be checked against the entries.
 * @see reference "What the service does": points are frozen when a call starts, settled when it ends.
 */
export type LedgerKind = 'fund' | 'freeze' | 'charge' | 'refund';

export interface LedgerEntry {
  id: number;
  account_id: string;
  kind: LedgerKind;
  points: Points;
  task_id: string | null;
  /** The request id of the text call the points were for. */
  call_id?: string;
  at: string;
}

export interface Balances {
  available: Points;
  frozen: Points;
  charged: Points;
}


/**
 * Applies one movement to balances, returning the new balances. Throws before changing anything. `overdraw`
 * lets a settlement freeze more than is available: the difference a task used beyond its estimate is collected
 * whatever the balance (like the reference's credit line), so available may go below zero.
 */
export function applyMovement(balances: Balances, kind: LedgerKind, points: Points, overdraw = false): Balances {
  switch (kind) {
    case 'fund':
      return { ...balances, available: add(balances.available, points) };
    case 'freeze':
      if (!overdraw && cmp(balances.available, points) < 0) {
        throw new ApiError(
          'insufficient_points',
          `This call needs ${points} points; ${balances.available} are available. Nothing was frozen.`,
        );
      }
      return { ...balances, available: sub(balances.available, points), frozen: add(balances.frozen, points) };
    case 'charge':
      return { ...balances, frozen: sub(balances.frozen, points), charged: add(balances.charged, points) };
    case 'refund':
      return { ...balances, frozen: sub(balances.frozen, points), available: add(balances.available, points) };
  }
}

