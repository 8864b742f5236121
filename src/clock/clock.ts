import { createDueQueue } from './queue.ts';

/**
 * The only source of time in the emulator. Domain code asks a Clock for `now()` and schedules work with `at()`;
 * it never reads the wall clock or sets timers itself, so virtual time can be advanced and tests never sleep.
 */
export type ClockMode = 'real' | 'manual';

export interface Clock {
  readonly mode: ClockMode;
  /** Times faster than the wall clock (real mode); 1 in manual mode. */
  readonly speed: number;
  /** Real mode: from now on run `speed` times faster than the wall clock (RangeError in manual mode). */
  setSpeed(speed: number): void;
  /** Current virtual time, epoch milliseconds. */
  now(): number;
  /** Runs `job` once the virtual time reaches `atMs` (at once on the next advance if already due). */
  at(atMs: number, job: Job): Cancel;
  /** Moves virtual time forward, running every job that falls due in time order, each at its own time. */
  advance(ms: number): Promise<number>;
  /**
   * Runs every job already due, without moving time: for work scheduled "now" outside an advance (in manual
   * mode nothing else would run it until the next advance).
   */
  runDue(): Promise<void>;
  /**
   * The wall-clock time, epoch milliseconds, whatever the virtual time: for what the outside world checks against
   * its own clock (a callback's webhook-timestamp) and for measuring real durations (a callback's round trip).
   */
  wallNow(): number;
  /**
   * Resolves after `ms` of real time (0: at the next turn of the event loop), whatever the virtual clock does:
   * latency on the wire (the time to a text stream's first token) is real even on a manual clock.
   */
  wait(ms: number): Promise<void>;
  /** Jobs waiting (canceled ones may still be counted until they reach the front). */
  pending(): number;
  /** Stops running jobs and wall-clock timers so the process can exit; resolves when the running job is done. */
  stop(): Promise<void>;
}

/** A scheduled job; it receives the virtual time it was due at, which is "now" for whatever it records. */
export type Job = (dueMs: number) => void | Promise<void>;
export type Cancel = () => void;

export interface ClockOptions {
  mode: ClockMode;
  /** Virtual time at creation; defaults to the wall time. */
  startMs?: number;
  /** Never start before this (a restarted emulator resumes where its stored clock stopped). */
  notBeforeMs?: number;
  speed?: number;
  /** Where a failing job's error goes; it does not stop the clock. Default: standard error. */
  onJobError?: (err: unknown) => void;
}

export function createClock(options: ClockOptions): Clock {
  let speed = options.mode === 'real' ? (options.speed ?? 1) : 1;
  let wallStart = Date.now();
  let virtualStart = Math.max(options.startMs ?? wallStart, options.notBeforeMs ?? -Infinity);
  // Virtual time = start + elapsed wall time × speed (real mode only) + everything advanced by hand.
  let advancedMs = 0;
  let manualNow = virtualStart;
  const queue = createDueQueue<Job>();
  let timer: NodeJS.Timeout | undefined;
  let draining: Promise<void> = Promise.resolve();
  let stopped = false;
  const onJobError = options.onJobError ?? ((err: unknown) => console.error('svc-emulator: a scheduled job failed:', err));

  const now = (): number =>
    options.mode === 'manual' ? manualNow : virtualStart + (Date.now() - wallStart) * speed + advancedMs;

  async function runDue(untilMs: number, setNow: (ms: number) => void): Promise<void> {
    for (let next = queue.peek(); !stopped && next !== undefined && next.atMs <= untilMs; next = queue.peek()) {
      queue.pop();
      setNow(next.atMs);
      try {
        await next.value(next.atMs);
      } catch (err) {
        // One failing job (a store write, a callback's I/O) must not stop every later one.
        onJobError(err);
      }
    }
  }

  /**
   * Serializes drains: an advance and a timer firing never interleave their jobs. The end of a drain is read when
   * its turn comes, and the clock is left there before the next one starts.
   */
  function drain(untilMs: () => number, setNow: (ms: number) => void): Promise<void> {
    draining = draining.then(async () => {
      if (stopped) return;
      const until = untilMs();
      await runDue(until, setNow);
      setNow(until);
    });
    return draining;
  }

  function armTimer(): void {
    if (options.mode !== 'real' || stopped) return;
    if (timer) clearTimeout(timer);
    timer = undefined;
    const next = queue.peek();
    if (!next) return;
    const wallDelay = Math.max(0, (next.atMs - now()) / speed);
    // Node caps timers at ~24.8 days; a longer wait just re-arms.
    timer = setTimeout(() => {
      timer = undefined;
      void drain(now, () => undefined).then(armTimer, armTimer);
    }, Math.min(wallDelay, 2 ** 31 - 1));
    timer.unref();
  }

  return {
    mode: options.mode,
    get speed() {
      return speed;
    },
    setSpeed(next) {
      if (options.mode !== 'real') throw new RangeError('only a real clock has a speed');
      if (!(next > 0)) throw new RangeError('speed must be positive');
      // Re-anchor at this instant, so the time so far stays as it was and only what follows runs faster or slower.
      virtualStart = now();
      advancedMs = 0;
      wallStart = Date.now();
      speed = next;
      armTimer();
    },
    now,
    at(atMs, job) {
      const entry = queue.push(atMs, job);
      if (queue.peek() === entry) armTimer();
      return () => {
        entry.canceled = true;
      };
    },
    pending: () => queue.size,
    runDue() {
      return options.mode === 'manual'
        ? drain(
            () => manualNow,
            (t) => {
              manualNow = Math.max(manualNow, t);
            },
          )
        : drain(now, () => undefined);
    },
    wallNow: () => Date.now(),
    // Even no latency yields to the event loop, so concurrent streams interleave instead of queuing.
    wait: (ms) => new Promise((resolve) => (ms > 0 ? setTimeout(resolve, ms) : setImmediate(resolve))),
    async advance(ms) {
      if (!(ms >= 0)) throw new RangeError('advance needs a non-negative number of milliseconds');
      if (options.mode === 'manual') {
        // The target is taken from where the previous advance left the clock, not from where it stood when this one
        // was asked: advances that arrive while a drain waits on a callback's receiver would otherwise all aim at
        // the same point, and all but one of them would be lost.
        await drain(
          () => manualNow + ms,
          (t) => {
            manualNow = Math.max(manualNow, t);
          },
        );
      } else {
        advancedMs += ms;
        await drain(now, () => undefined);
        armTimer();
      }
      return now();
    },
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      // Whatever job is running (a callback waiting for its receiver) finishes before the store is closed.
      return draining;
    },
  };
}
