import type { Clock } from '../clock/index.ts';

export interface Hurriable {
  /** The clock as the HTTP app sees it: the same clock, whose `wait` ends early once `hurry` was called. */
  clock: Clock;
  /** Ends every latency wait now and makes later ones pass at once (still yielding to the event loop). */
  hurry(): void;
}

/**
 * A shutdown should be bounded, but a text scenario may pace a stream over minutes (`chunk_interval_ms`). So
 * when the emulator closes, the app's latency waits are cut short: a running stream sends the rest of its
 * events without pausing and ends with its normal terminal event, inside the grace period, with the same
 * content it would have had. Only `wait` changes; time, jobs and everything else are the clock's own.
 */
export function hurriable(clock: Clock): Hurriable {
  let hurrying = false;
  let release = (): void => undefined;
  const hurried = new Promise<void>((resolve) => {
    release = resolve;
  });
  const wait = (ms: number): Promise<void> => (hurrying ? clock.wait(0) : Promise.race([clock.wait(ms), hurried]));
  return {
    clock: new Proxy(clock, {
      get: (target, property) => (property === 'wait' ? wait : Reflect.get(target, property)),
    }),
    hurry() {
      hurrying = true;
      release();
    },
  };
}
