import type { Clock } from './clock.ts';

/** Rows `inTurns` handles a turn: some 10 ms of scheduling, then requests have their turn. */
const TURN_PAGE = 200;

/**
 * Reads rows in seq order a page at a time and hands each to `each`, one page per event-loop turn after the
 * first, so a large store is scheduled while requests already have their turns. The first page runs now; the rest
 * stop once `current` turns false (the store was replaced or closed). Virtual time waits at now until the last page
 * has run, so no job a later page schedules is passed over by an advance.
 */
export function inTurns<T extends { seq: number }>(
  clock: Clock,
  current: () => boolean,
  read: (afterSeq: number, limit: number) => readonly T[],
  each: (row: T) => void,
): Promise<void> {
  const page = (after: number): number | null => {
    const rows = read(after, TURN_PAGE);
    for (const row of rows) each(row);
    return rows.length < TURN_PAGE ? null : (rows[rows.length - 1]?.seq ?? null);
  };
  const first = page(0);
  if (first === null) return Promise.resolve();
  const rest = (async () => {
    for (let after: number | null = first; after !== null; after = page(after)) {
      await clock.wait(0);
      if (!current()) return;
    }
  })();
  clock.track(rest, clock.now());
  return rest;
}
