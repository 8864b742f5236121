/**
 * The only source of time in the emulator. Domain code asks a Clock for `now()` and schedules work with `at()`;
 * it never reads the wall clock or sets timers itself, so virtual time can be advanced and tests never sleep.
 */
export type ClockMode = 'real' | 'manual';

export interface Clock {
  readonly mode: ClockMode;
  /** Times faster than the wall clock (real mode); 1 in manual mode. */
  readonly speed: number;
  /** Current virtual time, epoch milliseconds. */
  now(): number;
  /** Runs `job` once the virtual time reaches `atMs` (at once on the next advance if already due). */
  at(atMs: number, job: Job): Cancel;
  /** Moves virtual time forward, running every job that falls due in time order, each at its own time. */
  advance(ms: number): Promise<number>;
  /** Stops wall-clock timers so the process can exit. */
  stop(): void;
}

export type Job = () => void | Promise<void>;
export type Cancel = () => void;

interface Entry {
  atMs: number;
  seq: number;
  job: Job;
}

export interface ClockOptions {
  mode: ClockMode;
  /** Virtual time at creation; defaults to the wall time. */
  startMs?: number;
  /** Never start before this (a restarted emulator resumes where its stored clock stopped). */
  notBeforeMs?: number;
  speed?: number;
}

export function createClock(options: ClockOptions): Clock {
  const speed = options.mode === 'real' ? (options.speed ?? 1) : 1;
  const wallStart = Date.now();
  const virtualStart = Math.max(options.startMs ?? wallStart, options.notBeforeMs ?? -Infinity);
  // Virtual time = start + elapsed wall time × speed (real mode only) + everything advanced by hand.
  let advancedMs = 0;
  let manualNow = virtualStart;
  const queue: Entry[] = [];
  let seq = 0;
  let timer: NodeJS.Timeout | undefined;
  let draining: Promise<void> = Promise.resolve();
  let stopped = false;

  const now = (): number =>
    options.mode === 'manual' ? manualNow : virtualStart + (Date.now() - wallStart) * speed + advancedMs;

  function insert(entry: Entry): void {
    // Binary search keeps the queue ordered by due time, then by scheduling order for equal times.
    let lo = 0;
    let hi = queue.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const other = queue[mid] as Entry;
      if (other.atMs < entry.atMs || (other.atMs === entry.atMs && other.seq < entry.seq)) lo = mid + 1;
      else hi = mid;
    }
    queue.splice(lo, 0, entry);
  }

  async function runDue(untilMs: number, setNow: (ms: number) => void): Promise<void> {
    for (let next = queue[0]; next !== undefined && next.atMs <= untilMs; next = queue[0]) {
      queue.shift();
      setNow(next.atMs);
      await next.job();
    }
  }

  /** Serializes drains: an advance and a timer firing never interleave their jobs. */
  function drain(untilMs: () => number, setNow: (ms: number) => void): Promise<void> {
    draining = draining.then(() => runDue(untilMs(), setNow));
    return draining;
  }

  function armTimer(): void {
    if (options.mode !== 'real' || stopped) return;
    if (timer) clearTimeout(timer);
    timer = undefined;
    const next = queue[0];
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
    speed,
    now,
    at(atMs, job) {
      const entry: Entry = { atMs, seq: seq++, job };
      insert(entry);
      armTimer();
      return () => {
        const i = queue.indexOf(entry);
        if (i >= 0) queue.splice(i, 1);
        armTimer();
      };
    },
    async advance(ms) {
      if (!(ms >= 0)) throw new RangeError('advance needs a non-negative number of milliseconds');
      if (options.mode === 'manual') {
        const target = manualNow + ms;
        await drain(
          () => target,
          (t) => {
            manualNow = Math.max(manualNow, t);
          },
        );
        manualNow = Math.max(manualNow, target);
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
    },
  };
}
