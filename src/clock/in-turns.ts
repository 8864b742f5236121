import type { Clock } from './clock.ts';

/**
 * Runs `page` from 0 until it answers null, one page per event-loop turn after the first, so a large store is
 * scheduled while requests already have their turns. The first page runs now; the rest stop once `current`
 * turns false (the store was replaced or closed). Virtual time waits at now until the last page has run, so no
 * job a later page schedules is passed over by an advance.
 */
export function inTurns(clock: Clock, current: () => boolean, page: (after: number) => number | null): Promise<void> {
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
