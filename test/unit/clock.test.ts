import { describe, expect, it } from 'vitest';
import { compactTime, createClock, formatTime } from '../../src/clock/index.ts';

const T0 = Date.parse('2026-11-23T01:00:00Z');

describe('manual clock', () => {
  it('stands still until advanced', async () => {
    const clock = createClock({ mode: 'manual', startMs: T0 });
    expect(clock.now()).toBe(T0);
    expect(await clock.advance(90_000)).toBe(T0 + 90_000);
    expect(clock.now()).toBe(T0 + 90_000);
  });

  it('advances in seconds too, the control API unit, running what falls due on the way', async () => {
    const clock = createClock({ mode: 'manual', startMs: T0 });
    const ran: number[] = [];
    clock.at(T0 + 59_000, () => void ran.push(clock.now()));
    expect(await clock.advanceSeconds(60)).toBe(T0 + 60_000);
    expect(ran).toEqual([T0 + 59_000]);
    await expect(clock.advanceSeconds(-1)).rejects.toThrow(RangeError);
    expect(clock.now()).toBe(T0 + 60_000);
  });

  it('runs due jobs in time order, each at its own time', async () => {
    const clock = createClock({ mode: 'manual', startMs: T0 });
    const seen: [string, number][] = [];
    clock.at(T0 + 3_000, () => void seen.push(['c', clock.now()]));
    clock.at(T0 + 1_000, () => void seen.push(['a', clock.now()]));
    clock.at(T0 + 2_000, () => void seen.push(['b', clock.now()]));
    clock.at(T0 + 9_000, () => void seen.push(['late', clock.now()]));
    await clock.advance(5_000);
    expect(seen).toEqual([
      ['a', T0 + 1_000],
      ['b', T0 + 2_000],
      ['c', T0 + 3_000],
    ]);
    expect(clock.now()).toBe(T0 + 5_000);
  });

  it('runs jobs scheduled by a job when they fall within the same advance', async () => {
    const clock = createClock({ mode: 'manual', startMs: T0 });
    const seen: number[] = [];
    clock.at(T0 + 1_000, () => {
      seen.push(clock.now());
      clock.at(clock.now() + 60_000, () => void seen.push(clock.now()));
    });
    await clock.advance(3_600_000);
    expect(seen).toEqual([T0 + 1_000, T0 + 61_000]);
  });

  it('runs jobs of equal time in the order they were scheduled, and skips canceled ones', async () => {
    const clock = createClock({ mode: 'manual', startMs: T0 });
    const seen: string[] = [];
    clock.at(T0 + 1_000, () => void seen.push('first'));
    const cancel = clock.at(T0 + 1_000, () => void seen.push('canceled'));
    clock.at(T0 + 1_000, () => void seen.push('second'));
    cancel();
    await clock.advance(1_000);
    expect(seen).toEqual(['first', 'second']);
  });

  it('refuses to go backwards', async () => {
    const clock = createClock({ mode: 'manual', startMs: T0 });
    await expect(clock.advance(-1)).rejects.toThrow(RangeError);
  });

  it('never starts before the time it must resume from', () => {
    expect(createClock({ mode: 'manual', startMs: T0, notBeforeMs: T0 + 5 }).now()).toBe(T0 + 5);
  });
});

describe('real clock', () => {
  it('follows wall time, shifted by advances and scaled by speed', async () => {
    const clock = createClock({ mode: 'real', startMs: T0, speed: 1 });
    expect(clock.now() - T0).toBeLessThan(1_000);
    await clock.advance(3_600_000);
    expect(clock.now() - T0).toBeGreaterThanOrEqual(3_600_000);
    clock.stop();
  });

  it('runs a job that an advance makes due', async () => {
    const clock = createClock({ mode: 'real', startMs: T0 });
    let ran = false;
    clock.at(T0 + 60_000, () => {
      ran = true;
    });
    await clock.advance(60_000);
    expect(ran).toBe(true);
    clock.stop();
  });
});

describe('time format', () => {
  it.each([
    ['2026-11-23T01:00:00Z', '2026-11-23T09:00:00+08:00', '261123090000'],
    ['2026-12-31T16:30:05Z', '2027-01-01T00:30:05+08:00', '270101003005'],
    ['2026-02-28T20:00:00.999Z', '2026-03-01T04:00:00+08:00', '260301040000'],
  ])('writes %s as %s in Beijing time', (utc, beijing, compact) => {
    expect(formatTime(Date.parse(utc))).toBe(beijing);
    expect(compactTime(Date.parse(utc))).toBe(compact);
  });
});

describe('real clock speed', () => {
  it('keeps the time so far and runs at the new speed from the change on', () => {
    const clock = createClock({ mode: 'real', startMs: T0, speed: 1 });
    const before = clock.now();
    clock.setSpeed(2);
    expect(clock.speed).toBe(2);
    // No jump at the change (a slow machine may let a few hundred wall milliseconds pass, doubled).
    expect(clock.now() - before).toBeLessThan(1000);
    clock.stop();
  });

  it('has no speed to set on a manual clock', () => {
    expect(() => createClock({ mode: 'manual', startMs: T0 }).setSpeed(2)).toThrow(RangeError);
  });
});

describe('work in flight beside the clock', () => {
  const deferred = () => {
    let resolve = (): void => undefined;
    const promise = new Promise<void>((r) => (resolve = r));
    return { promise, resolve };
  };

  it('runs jobs due before a hold while the work is in flight, and stops short of the hold until it settles', async () => {
    const clock = createClock({ mode: 'manual', startMs: T0 });
    const work = deferred();
    const seen: string[] = [];
    clock.at(T0, () => {
      clock.track(
        work.promise.then(() => {
          // What the outcome schedules (a retry 60 s after the start) still runs inside the jump, at its time.
          clock.at(clock.endOf(T0) + 60_000, (at) => void seen.push(`retry@${(at - T0) / 1000}`));
        }),
        T0 + 60_000,
      );
    });
    clock.at(T0 + 30_000, (at) => void seen.push(`job@${(at - T0) / 1000}`));
    clock.at(T0 + 90_000, (at) => void seen.push(`job@${(at - T0) / 1000}`));
    const advanced = clock.advance(120_000);
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual(['job@30']);
    expect(clock.now()).toBe(T0 + 30_000);
    work.resolve();
    expect(await advanced).toBe(T0 + 120_000);
    expect(seen).toEqual(['job@30', 'retry@60', 'job@90']);
  });

  it('resolves an advance only once the work its jobs started has settled, without holding the next advance', async () => {
    const clock = createClock({ mode: 'manual', startMs: T0 });
    const work = deferred();
    clock.at(T0, () => clock.track(work.promise, T0 + 60_000));
    let firstDone = false;
    const first = clock.advance(0).then(() => (firstDone = true));
    expect(await clock.advance(10_000)).toBe(T0 + 10_000);
    expect(firstDone).toBe(false);
    work.resolve();
    await first;
    expect(firstDone).toBe(true);
  });

  it('ends work on the manual clock when it began, and on the real clock at the time it settles', async () => {
    expect(createClock({ mode: 'manual', startMs: T0 }).endOf(T0 - 5_000)).toBe(T0 - 5_000);
    const real = createClock({ mode: 'real', startMs: T0 });
    expect(real.endOf(T0 - 5_000)).toBeGreaterThanOrEqual(T0);
    await real.stop();
  });

  it('lets runDue and stop wait for work in flight', async () => {
    const clock = createClock({ mode: 'manual', startMs: T0 });
    const work = deferred();
    clock.track(work.promise);
    let settled = false;
    const ran = clock.runDue().then(() => (settled = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    work.resolve();
    await ran;
    await clock.stop();
  });
});
