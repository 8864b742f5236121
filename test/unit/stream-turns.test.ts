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
