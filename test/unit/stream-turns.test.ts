import { expect, it } from 'vitest';
import { streamTurns } from '../../src/http/stream-turns.ts';

// The turns streams share (src/http/stream-turns.ts): the rest of a stream waits for a turn in which no stream
// began, and never more than a few turns.

/** Counts event-loop turns (check phases) until `done` resolves. */
async function turnsUntil(done: Promise<void>, everyTurn: () => void = () => undefined): Promise<number> {
  let turns = 0;
  let finished = false;
  void done.then(() => {
    finished = true;
  });
  while (!finished && turns < 100) {
    everyTurn();
    await new Promise((resolve) => setImmediate(resolve));
    turns += 1;
  }
  return turns;
}

it('lets a stream go on in the next turn when no other stream began', async () => {
  const turns = streamTurns();
  expect(await turnsUntil(turns.next())).toBeLessThanOrEqual(2);
});

it('holds the rest of the streams while new ones begin, and lets them all go together once a turn is quiet', async () => {
  const turns = streamTurns();
  const order: string[] = [];
  const a = turns.next().then(() => order.push('a'));
  const b = turns.next().then(() => order.push('b'));
  let beginning = 3;
  const waited = await turnsUntil(Promise.all([a, b]).then(() => undefined), () => {
    if (beginning-- > 0) turns.began();
  });
  expect(waited).toBeGreaterThanOrEqual(3);
  expect(waited).toBeLessThanOrEqual(6);
  expect(order).toEqual(['a', 'b']);
});

it('never holds a stream for more than eight turns, however many streams keep beginning', async () => {
  const turns = streamTurns();
  const waited = await turnsUntil(turns.next(), () => turns.began());
  expect(waited).toBeGreaterThanOrEqual(8);
  expect(waited).toBeLessThanOrEqual(11);
});

it('lets a few streams go on in a quiet turn, the longest waiting first, and the rest in the turns after', async () => {
  const turns = streamTurns();
  const released: [stream: number, turn: number][] = [];
  let turn = 0;
  const all = Array.from({ length: 10 }, (_, stream) => turns.next().then(() => released.push([stream, turn])));
  await turnsUntil(Promise.all(all).then(() => undefined), () => {
    turn += 1;
  });
  expect(released.map(([stream]) => stream)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  // Never all ten in the same turn: at most a few at a time.
  const perTurn = new Map<number, number>();
  for (const [, at] of released) perTurn.set(at, (perTurn.get(at) ?? 0) + 1);
  expect(Math.max(...perTurn.values())).toBeLessThanOrEqual(4);
  expect(perTurn.size).toBeGreaterThanOrEqual(3);
});
