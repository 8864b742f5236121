import request from 'supertest';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { createClock } from '../../src/clock/index.ts';
import { createEmulator } from '../../src/index.ts';

/**
 * The real clock under vitest's fake timers: wall time only moves when a test moves it, so nothing sleeps.
 * Only timeouts and Date are faked; supertest's sockets keep working on the real event loop.
 */
const T0 = Date.parse('2026-11-23T01:00:00Z'); // 09:00:00 in Beijing, a whole second

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  vi.setSystemTime(T0);
});

afterEach(() => {
  vi.useRealTimers();
});

it('starts at the wall time when no start time is given and follows it at speed 1', async () => {
  const clock = createClock({ mode: 'real' });
  expect(clock.now()).toBe(T0);
  await vi.advanceTimersByTimeAsync(1_500);
  expect(clock.now()).toBe(T0 + 1_500);
  await clock.stop();
});

it('runs a job scheduled 5 s ahead after 5 s of wall time at speed 1, not before, with its due time', async () => {
  const clock = createClock({ mode: 'real', startMs: T0, speed: 1 });
  const calls: { due: number; wall: number }[] = [];
  clock.at(T0 + 5_000, (due) => void calls.push({ due, wall: Date.now() }));
  await vi.advanceTimersByTimeAsync(4_999);
  expect(calls).toEqual([]);
  await vi.advanceTimersByTimeAsync(1);
  expect(calls).toEqual([{ due: T0 + 5_000, wall: T0 + 5_000 }]);
  expect(clock.now()).toBe(T0 + 5_000);
  await clock.stop();
});

it('runs a job an hour of virtual time ahead after 60 s of wall time at speed 60, not before', async () => {
  const clock = createClock({ mode: 'real', startMs: T0, speed: 60 });
  const due: number[] = [];
  clock.at(T0 + 3_600_000, (at) => void due.push(at));
  await vi.advanceTimersByTimeAsync(59_999);
  expect(due).toEqual([]);
  expect(clock.now()).toBe(T0 + 3_599_940);
  await vi.advanceTimersByTimeAsync(1);
  expect(due).toEqual([T0 + 3_600_000]);
  expect(clock.now()).toBe(T0 + 3_600_000);
  await clock.stop();
});

it('runs a job whose wall delay is a fraction of a millisecond once its virtual time is reached', async () => {
  // 1 virtual second at speed 7 is 142.857… ms of wall time.
  const clock = createClock({ mode: 'real', startMs: T0, speed: 7 });
  const due: number[] = [];
  clock.at(T0 + 1_000, (at) => void due.push(at));
  await vi.advanceTimersByTimeAsync(142);
  expect(due).toEqual([]);
  await vi.advanceTimersByTimeAsync(1);
  expect(due).toEqual([T0 + 1_000]);
  await clock.stop();
});

it('moves virtual time forward at once on advance in real mode, running due jobs in time order', async () => {
  const clock = createClock({ mode: 'real', startMs: T0, speed: 1 });
  const seen: [string, number][] = [];
  clock.at(T0 + 3_000, (due) => void seen.push(['c', due]));
  clock.at(T0 + 1_000, (due) => void seen.push(['a', due]));
  clock.at(T0 + 2_000, (due) => void seen.push(['b', due]));
  clock.at(T0 + 9_000, (due) => void seen.push(['late', due]));
  expect(await clock.advance(5_000)).toBe(T0 + 5_000);
  expect(seen).toEqual([
    ['a', T0 + 1_000],
    ['b', T0 + 2_000],
    ['c', T0 + 3_000],
  ]);
  expect(Date.now()).toBe(T0);
  // The rest still follows the wall: 4 more seconds bring the last job due.
  await vi.advanceTimersByTimeAsync(3_999);
  expect(seen).toHaveLength(3);
  await vi.advanceTimersByTimeAsync(1);
  expect(seen).toEqual([
    ['a', T0 + 1_000],
    ['b', T0 + 2_000],
    ['c', T0 + 3_000],
    ['late', T0 + 9_000],
  ]);
  expect(clock.now()).toBe(T0 + 9_000);
  await clock.stop();
});

it('re-arms its one timer when a job is scheduled earlier than the armed one', async () => {
  const clock = createClock({ mode: 'real', startMs: T0, speed: 1 });
  const seen: [string, number][] = [];
  clock.at(T0 + 10_000, (due) => void seen.push(['later', due]));
  expect(vi.getTimerCount()).toBe(1);
  clock.at(T0 + 2_000, (due) => void seen.push(['sooner', due]));
  expect(vi.getTimerCount()).toBe(1);
  await vi.advanceTimersByTimeAsync(2_000);
  expect(seen).toEqual([['sooner', T0 + 2_000]]);
  await vi.advanceTimersByTimeAsync(7_999);
  expect(seen).toEqual([['sooner', T0 + 2_000]]);
  await vi.advanceTimersByTimeAsync(1);
  expect(seen).toEqual([
    ['sooner', T0 + 2_000],
    ['later', T0 + 10_000],
  ]);
  expect(vi.getTimerCount()).toBe(0);
  await clock.stop();
});

it('keeps the armed timer when a later job is scheduled', async () => {
  const clock = createClock({ mode: 'real', startMs: T0, speed: 1 });
  const seen: number[] = [];
  clock.at(T0 + 2_000, (due) => void seen.push(due));
  clock.at(T0 + 10_000, (due) => void seen.push(due));
  expect(vi.getTimerCount()).toBe(1);
  await vi.advanceTimersByTimeAsync(2_000);
  expect(seen).toEqual([T0 + 2_000]);
  await vi.advanceTimersByTimeAsync(8_000);
  expect(seen).toEqual([T0 + 2_000, T0 + 10_000]);
  await clock.stop();
});

it('runs a job scheduled by a firing job at its own due time', async () => {
  const clock = createClock({ mode: 'real', startMs: T0, speed: 1 });
  const seen: number[] = [];
  clock.at(T0 + 1_000, (due) => {
    seen.push(due);
    clock.at(due + 3_000, (next) => void seen.push(next));
  });
  await vi.advanceTimersByTimeAsync(1_000);
  expect(seen).toEqual([T0 + 1_000]);
  await vi.advanceTimersByTimeAsync(2_999);
  expect(seen).toEqual([T0 + 1_000]);
  await vi.advanceTimersByTimeAsync(1);
  expect(seen).toEqual([T0 + 1_000, T0 + 4_000]);
  await clock.stop();
});

it('keeps running later jobs after a job throws', async () => {
  const clock = createClock({ mode: 'real', startMs: T0, speed: 1 });
  const seen: number[] = [];
  clock.at(T0 + 1_000, () => {
    throw new Error('a job failed');
  });
  clock.at(T0 + 2_000, (due) => void seen.push(due));
  clock.at(T0 + 3_000, (due) => void seen.push(due));
  await vi.advanceTimersByTimeAsync(3_000);
  expect(seen).toEqual([T0 + 2_000, T0 + 3_000]);
  await clock.stop();
});

it('fires nothing after stop, and arms no timer for jobs scheduled after it', async () => {
  const clock = createClock({ mode: 'real', startMs: T0, speed: 1 });
  const seen: number[] = [];
  clock.at(T0 + 1_000, (due) => void seen.push(due));
  expect(vi.getTimerCount()).toBe(1);
  await clock.stop();
  expect(vi.getTimerCount()).toBe(0);
  clock.at(T0 + 500, (due) => void seen.push(due));
  expect(vi.getTimerCount()).toBe(0);
  await vi.advanceTimersByTimeAsync(60_000);
  expect(seen).toEqual([]);
  expect(clock.pending()).toBe(2);
});

it('runs a social-notes-data task end to end on the real clock at 600x: queued, processing, succeeded 9 s after creation', async () => {
  const emulator = await createEmulator({ clock: 'real', speed: 600, adminToken: 'x', log: () => {} });
  try {
    const api = request(emulator.app);
    const auth = { Authorization: 'Bearer sk-emulator-demo', 'X-Emulator-Scenario': 'default' };
    const submitted = await api
      .post('/v1/tasks')
      .set(auth)
      .send({ model: 'social-notes-data', input: { mode: 'note', note: 'n1', agree: true } });
    expect(submitted.status).toBe(200);
    expect(submitted.body).toMatchObject({
      status: 'queued',
      created_at: '2026-11-23T09:00:00+08:00',
      started_at: null,
      finished_at: null,
      points: { frozen: '40.000', charged: '0.000', refunded: '0.000' },
    });
    const id = submitted.body.id as string;
    const created = Date.parse(submitted.body.created_at as string);

    // 1 ms of wall time is 0.6 s of virtual time: still queued (the queue takes 1 s).
    await vi.advanceTimersByTimeAsync(1);
    expect((await api.get(`/v1/tasks/${id}`).set(auth)).body.status).toBe('queued');

    // 10 ms in all is 6 s: started at 1 s, processing for 8 s.
    await vi.advanceTimersByTimeAsync(9);
    const processing = await api.get(`/v1/tasks/${id}`).set(auth);
    expect(processing.body).toMatchObject({ status: 'processing', finished_at: null });
    expect(Date.parse(processing.body.started_at as string) - created).toBe(1_000);

    // 20 ms in all is 12 s of virtual time.
    await vi.advanceTimersByTimeAsync(10);
    const done = await api.get(`/v1/tasks/${id}`).set(auth);
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({
      status: 'succeeded',
      started_at: '2026-11-23T09:00:01+08:00',
      finished_at: '2026-11-23T09:00:09+08:00',
      points: { frozen: '40.000', charged: '40.000', refunded: '0.000' },
      error: null,
    });
    expect(done.body.output).toMatchObject({ files: [] });
    expect(typeof done.body.output.text).toBe('string');
    expect(Date.parse(done.body.finished_at as string) - created).toBe(9_000);
    expect(emulator.clock.now()).toBe(T0 + 12_000);
  } finally {
    await emulator.close();
  }
});
