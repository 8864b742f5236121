import { createDueQueue } from './queue.ts';
import { createInFlight } from './in-flight.ts';
import { START_DEFAULTS } from '../defaults/index.ts';

/**
 * The only source of time in the emulator. Domain code asks a Clock for `now()` and schedules work with `at()`;
 * it never reads the wall clock or sets timers itself, so virtual time can be advanced and tests never sleep.
 *
 * Time is decided by the clock alone: a job is synchronous, and one that does I/O (a callback send) starts it,
 * hands it to `track()` and returns. Nothing a receiver does can hold a task transition, a timeout or another
 * callback.
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
  /** Runs `job` once the virtual time reaches `atMs` (at once on the next step if already due). */
  at(atMs: number, job: Job): Cancel;
  /**
   * Moves virtual time forward, running every job that falls due in time order, each at its own time. Work the
   * jobs start (see `track`) runs concurrently; the jump does not pass a hold of work still in flight, so its
   * outcome is recorded at its own time and what it schedules runs inside the jump. Resolves with the time this
   * jump reached, once the work started during it has settled.
   */
  advance(ms: number): Promise<number>;
  /** `advance` in seconds, the unit of the control API's `POST /_emulator/clock/advance {seconds}`. */
  advanceSeconds(seconds: number): Promise<number>;
  /**
   * Runs every job already due, without moving time (in manual mode nothing else would run them until the next
   * advance). Resolves once no work is in flight: "let everything due now happen", for tests and tools.
   */
  runDue(): Promise<void>;
  /**
   * Background work a job started (a callback send). The clock never waits for it, except that a jump of
   * virtual time stops short of `holdFromMs` until it settles (the earliest time its outcome could schedule
   * something), and `advance`, `runDue` and `stop` resolve after the work they saw started.
   */
  track(work: Promise<unknown>, holdFromMs?: number): void;
  /**
   * The virtual time at which work begun at `startedMs` ends if it ends now: on the real clock, now; on the
   * manual clock work takes no virtual time, so it ends when it began (schedules from it stay exact).
   */
  endOf(startedMs: number): number;
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
  /** Stops running jobs and wall-clock timers; resolves when the work in flight has settled. */
  stop(): Promise<void>;
}

/** A scheduled job; it receives the virtual time it was due at, which is "now" for whatever it records. */
export type Job = (dueMs: number) => void;
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
  /**
   * For an error that a moment may cure (a full disk: the job's transaction rolled back whole, so running it
   * again is safe), the virtual ms after which the job runs again; null for an error that is reported instead.
   */
  retryAfterMs?: (err: unknown) => number | null;
}

/**
 * The most of the machine's time one turn of the timer spends on due jobs before the event loop answers what came
 * in meanwhile. A backlog comes due at once (a restart's overdue tasks: thousands of jobs, each a store write):
 * run in one go it held every request for as long as it took, the first answer after the start included.
 */
const DUE_SLICE_MS = 5;

export function createClock(options: ClockOptions): Clock {
  const manual = options.mode === 'manual';
  let speed = manual ? 1 : (options.speed ?? START_DEFAULTS.speed);
  let wallStart = Date.now();
  let virtualStart = Math.max(options.startMs ?? wallStart, options.notBeforeMs ?? -Infinity);
  // Real mode: virtual time = start + elapsed wall time × speed + what jumps added. Manual mode: `manualNow`.
  let jumpedMs = 0;
  let manualNow = virtualStart;
  const queue = createDueQueue<Job>();
  const inFlight = createInFlight();
  let timer: NodeJS.Timeout | undefined;
  let continuation: NodeJS.Immediate | undefined;
  let jumps: Promise<unknown> = Promise.resolve();
  let stopped = false;
  const onJobError = options.onJobError ?? ((err: unknown) => console.error('svc-emulator: a scheduled job failed:', err));

  const flowing = (): number => virtualStart + (Date.now() - wallStart) * speed;
  const now = (): number => (manual ? manualNow : flowing() + jumpedMs);
  /** Moves virtual time forward to `t` (never back). */
  const moveTo = (t: number): void => {
    if (manual) manualNow = Math.max(manualNow, t);
    else jumpedMs = Math.max(jumpedMs, t - flowing());
  };

  /** Runs one job; work it starts is counted as started by `batch`. */
  function run(job: Job, dueMs: number, batch: Set<Promise<unknown>>): void {
    const outer = inFlight.collect(batch);
    try {
      job(dueMs);
    } catch (err) {
      const retryMs = options.retryAfterMs?.(err) ?? null;
      if (retryMs === null) {
        // One failing job (a store write) must not stop every later one.
        onJobError(err);
      } else {
        // Not lost: it runs again once the moment has passed (the timer is armed by whoever ran this job).
        queue.push(Math.max(dueMs, now()) + retryMs, job);
      }
    } finally {
      inFlight.collect(outer);
    }
  }

  /**
   * The jobs due by now, synchronously, in their order; real time decides, so holds do not apply. With a slice,
   * it stops once that much of the machine's time has gone and leaves the rest to `fire`'s next turn.
   */
  function runDueNow(batch: Set<Promise<unknown>>, sliceMs = Infinity): void {
    const until = sliceMs === Infinity ? Infinity : performance.now() + sliceMs;
    for (let next = queue.peek(); !stopped && next !== undefined && next.atMs <= now(); next = queue.peek()) {
      queue.pop();
      run(next.value, next.atMs, batch);
      if (performance.now() >= until) return;
    }
  }

  /**
   * Steps virtual time to `target`, job by job. Before stepping to or past a hold it waits for the work that
   * holds it: that work's outcome may schedule something (a retry) before the next job.
   */
  async function jump(target: number, batch: Set<Promise<unknown>>): Promise<void> {
    for (;;) {
      if (stopped) return;
      const next = queue.peek();
      const stepTo = next !== undefined && next.atMs <= target ? next.atMs : target;
      const holding = inFlight.holding(stepTo);
      if (holding.length > 0) {
        await Promise.race(holding);
        continue;
      }
      moveTo(stepTo);
      if (next === undefined || next.atMs > target) return;
      queue.pop();
      run(next.value, next.atMs, batch);
    }
  }

  /** Jumps run one at a time: each takes its target from where the previous one left the clock. */
  function serialized(work: () => Promise<void>): Promise<void> {
    const turn = jumps.then(work);
    jumps = turn.catch(() => undefined);
    return turn;
  }

  /** The timer's turn: a slice of what is due; what is left of a backlog runs once the event loop has polled. */
  function fire(): void {
    timer = undefined;
    continuation = undefined;
    runDueNow(new Set(), DUE_SLICE_MS);
    const next = queue.peek();
    if (!stopped && next !== undefined && next.atMs <= now()) {
      // Not a timer: an immediate runs after the I/O that came in meanwhile, and a timer's 1 ms would idle.
      continuation = setImmediate(fire);
      continuation.unref();
      return;
    }
    armTimer();
  }

  function armTimer(): void {
    // A backlog being run arms the timer itself once it is done.
    if (manual || stopped || continuation) return;
    if (timer) clearTimeout(timer);
    timer = undefined;
    const next = queue.peek();
    if (!next) return;
    const wallDelay = Math.max(0, (next.atMs - now()) / speed);
    // Node caps timers at ~24.8 days; a longer wait just re-arms.
    timer = setTimeout(fire, Math.min(wallDelay, 2 ** 31 - 1));
    timer.unref();
  }

  async function advance(ms: number): Promise<number> {
    if (!(ms >= 0)) throw new RangeError('advance needs a non-negative number of milliseconds');
    const batch = new Set<Promise<unknown>>();
    let reached = 0;
    await serialized(async () => {
      await jump(now() + ms, batch);
      reached = now();
      armTimer();
    });
    // Outside the turn: the next advance may go on while this one waits for what it sent. The answer is where
    // this advance left the clock, whatever later ones did meanwhile.
    await Promise.allSettled(batch);
    return reached;
  }

  return {
    mode: options.mode,
    get speed() {
      return speed;
    },
    setSpeed(next) {
      if (manual) throw new RangeError('only a real clock has a speed');
      if (!(next > 0)) throw new RangeError('speed must be positive');
      // Re-anchor at this instant, so the time so far stays as it was and only what follows runs faster or slower.
      virtualStart = now();
      jumpedMs = 0;
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
    track: (work, holdFromMs = Infinity) => inFlight.add(work, holdFromMs),
    endOf: (startedMs) => (manual ? startedMs : Math.max(startedMs, now())),
    async runDue() {
      // Called from inside a job, the work it starts belongs to that job's batch (an advance waits for it).
      const outer = inFlight.collecting();
      runDueNow(outer ?? new Set());
      // A job that asked to run again later is waited for like any other.
      armTimer();
      if (!outer) await inFlight.settled();
    },
    wallNow: machineNow,
    // Even no latency yields to the event loop, so concurrent streams interleave instead of queuing.
    wait: (ms) => new Promise((resolve) => (ms > 0 ? setTimeout(resolve, ms) : setImmediate(resolve))),
    advance,
    advanceSeconds(seconds) {
      if (!(seconds >= 0)) return Promise.reject(new RangeError('advanceSeconds needs a non-negative number of seconds'));
      return advance(seconds * 1000);
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      if (continuation) clearImmediate(continuation);
      timer = undefined;
      continuation = undefined;
      await jumps;
      // A callback being sent finishes (or times out) before the store is closed.
      await inFlight.settled();
    },
  };
}

/** The machine's time, for whatever is stamped before a clock exists (the CLI's first log lines). */
export const machineNow = (): number => Date.now();
