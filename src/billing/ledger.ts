import { ApiError } from '../errors/index.ts';
import { add, cmp, sub } from '../points/index.ts';
import type { Points } from '../points/index.ts';

/**
 * The points ledger of one account as plain functions over balances and entries. Every movement is one entry,
 * so `funded = available + frozen + charged` can always be checked against the entries:
 * available = fund − freeze + refund − collect, frozen = freeze − charge − refund, charged = charge + collect.
 *
 * - `fund`: points added to the account (available).
 * - `freeze`: available → frozen, when a task is submitted or a text call starts; refused beyond available.
 * - `charge`: frozen → charged, the settled part of a freeze.
 * - `refund`: frozen → available, the unused part of a freeze.
 * - `collect`: available → charged, what a settlement costs beyond its freeze (a task whose actual usage
 *   exceeded the estimate). Never refused: it may take available below zero.
 *
 * So a freeze is only ever released by its charge and its refund, and a settled task's charged points are its
 * charge plus its collect.
 * @see reference "What the service does": points are frozen when a call starts, settled when it ends;
 * "Model: video-gen-2.0-fast" Rules: the difference is refunded or collected afterward.
 */
export type LedgerKind = 'fund' | 'freeze' | 'charge' | 'refund' | 'collect';

export interface LedgerEntry {
  /** The entry's place among every account's entries, in the order written (gaps within one account). */
  id: number;
  /** The entry's number in its account's ledger: 1, 2, 3, … without gaps, in the order written. */
  n: number;
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
 * Applies one movement to balances, returning the new balances. Throws before changing anything (only a freeze
 * beyond available is refused). A collect is taken whatever the balance: the difference a task used beyond its
 * estimate is collected like a credit line, so available may go below zero.
 */
export function applyMovement(balances: Balances, kind: LedgerKind, points: Points): Balances {
  switch (kind) {
    case 'fund':
      return { ...balances, available: add(balances.available, points) };
    case 'freeze':
      if (cmp(balances.available, points) < 0) {
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
    case 'collect':
      return { ...balances, available: sub(balances.available, points), charged: add(balances.charged, points) };
  }
}

