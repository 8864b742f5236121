import { expect, it } from 'vitest';
import { createClock } from '../../src/clock/index.ts';

// A backlog of due jobs (a restart's overdue tasks) runs in slices of the machine's time, so what came in meanwhile
// is answered between them instead of after the last. Real timers: the test is about the order of the event loop's
// turns, and its jobs each keep the loop busy for a millisecond, as a store write would.

const busyFor = (ms: number): void => {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // the job's own work
  }
};

it('lets the event loop turn between slices of a backlog of due jobs, and runs every job in its order', async () => {
  const clock = createClock({ mode: 'real', speed: 1 });
  const overdue = clock.now() - 60_000;
  const JOBS = 40;
  const ran: number[] = [];
  let ranWhenTheLoopTurned: number | null = null;
  const done = new Promise<void>((resolve) => {
    for (let i = 0; i < JOBS; i++) {
      clock.at(overdue + i, () => {
        // Something that comes in once the backlog has begun: answered at the loop's next turn.
        if (i === 0) setImmediate(() => (ranWhenTheLoopTurned = ran.length));
        ran.push(i);
        busyFor(1);
        if (i === JOBS - 1) resolve();
      });
    }
  });
  await done;
  expect(ran).toEqual([...Array(JOBS).keys()]);
  expect(ranWhenTheLoopTurned).toBeGreaterThan(0);
  expect(ranWhenTheLoopTurned).toBeLessThan(JOBS / 2);
  await clock.stop();
});

it('runs every due job at once when asked to (runDue), however long they take', async () => {
  const clock = createClock({ mode: 'real', speed: 1 });
  const overdue = clock.now() - 60_000;
  const ran: number[] = [];
  for (let i = 0; i < 20; i++) clock.at(overdue + i, () => void (ran.push(i), busyFor(1)));
  await clock.runDue();
  expect(ran).toHaveLength(20);
  await clock.stop();
});
