/**
 * Work running beside the clock (callback sends): what a jump must not step past until it settles, and what an
 * advance, `runDue` or `stop` waits for. Only settled-or-not is tracked: a failure is the work's own business.
 */
export interface InFlight {
  add(work: Promise<unknown>, holdFromMs: number): void;
  /** Work whose hold is at or before `atMs`. */
  holding(atMs: number): Promise<void>[];
  /** From now on work added is also counted in `batch` (null: in none); returns the batch counted before. */
  collect(batch: Set<Promise<unknown>> | null): Set<Promise<unknown>> | null;
  /** The batch work is counted in now, if any. */
  collecting(): Set<Promise<unknown>> | null;
  /** Resolves once nothing is in flight, including work started while waiting. */
  settled(): Promise<void>;
}

export function createInFlight(): InFlight {
  const holds = new Map<Promise<void>, number>();
  let batch: Set<Promise<unknown>> | null = null;
  return {
    add(work, holdFromMs) {
      const done = work.then(
        () => undefined,
        () => undefined,
      );
      holds.set(done, holdFromMs);
      // Registered before anyone can wait on `done`, so a waiter that wakes finds it gone.
      void done.then(() => holds.delete(done));
      batch?.add(done);
    },
    holding(atMs) {
      const found: Promise<void>[] = [];
      for (const [work, hold] of holds) if (hold <= atMs) found.push(work);
      return found;
    },
    collect(next) {
      const previous = batch;
      batch = next;
      return previous;
    },
    collecting: () => batch,
    async settled() {
      while (holds.size > 0) await Promise.allSettled([...holds.keys()]);
    },
  };
}
