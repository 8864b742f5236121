import type { Clock } from '../clock/index.ts';
import type { StoreData } from './schema.ts';
import type { Store } from './store.ts';

type Section = 'calls' | 'deliveries';

/** What a sweep does with the oldest entry it looks at. */
export type Verdict = 'drop' | 'keep' | 'stop';

/**
 * The ids of a section, oldest first, kept beside the store so a retention sweep touches only the entries it
 * drops (plus one) instead of scanning a million. `sweep` stops at the first entry judged `stop` (too young); an
 * entry judged `keep` (old, but still needed) goes to the back and is judged again by a later sweep.
 */
export interface ArrivalOrder {
  sweep(judge: (id: string) => Verdict): number;
  /** The ids still stored, newest first (a page of the newest costs the page, not the section). */
  newestFirst(): Generator<string>;
}

export function oldestFirst(store: Store, section: Section): ArrivalOrder {
  let ids: string[] = [];
  let head = 0;
  const rebuild = (): void => {
    ids = Object.keys(store.peek()[section] as StoreData[Section]);
    head = 0;
  };
  rebuild();
  store.watch(section, (id) => ids.push(id), rebuild);
  return {
    *newestFirst() {
      const present = store.peek()[section] as Record<string, unknown>;
      // Ids sent to the back by `keep` are older than their place says; only deliveries have them, and they are
      // few (messages still retrying past the retention).
      for (let i = ids.length - 1; i >= head; i -= 1) {
        const id = ids[i] as string;
        if (Object.hasOwn(present, id)) yield id;
      }
    },
    sweep(judge) {
      const entries = store.data[section] as Record<string, unknown>;
      const present = store.peek()[section] as Record<string, unknown>;
      const kept: string[] = [];
      let dropped = 0;
      while (head < ids.length) {
        const id = ids[head] as string;
        if (!Object.hasOwn(present, id)) {
          head += 1;
          continue;
        }
        const verdict = judge(id);
        if (verdict === 'stop') break;
        head += 1;
        if (verdict === 'keep') kept.push(id);
        else {
          delete entries[id];
          dropped += 1;
        }
      }
      // One at a time: spreading a long array into push overflows the call stack.
      for (const id of kept) ids.push(id);
      // Forget the swept part now and then, so the queue is as long as the section, not its history.
      if (head > 1024 && head * 2 > ids.length) {
        ids = ids.slice(head);
        head = 0;
      }
      return dropped;
    },
  };
}

const HOUR_MS = 3600 * 1000;

/**
 * Sweeps `section` oldest first every hour on the clock, judging each entry at the sweep's time, and writes
 * what it dropped. Returns the arrival order, for listing newest first.
 */
export function sweepHourly(clock: Clock, store: Store, section: Section, judge: (id: string, atMs: number) => Verdict): ArrivalOrder {
  const order = oldestFirst(store, section);
  const sweep = (atMs: number): void => {
    if (order.sweep((id) => judge(id, atMs)) > 0) void store.commit();
    clock.at(atMs + HOUR_MS, sweep);
  };
  clock.at(clock.now() + HOUR_MS, sweep);
  return order;
}
