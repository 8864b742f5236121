import { readdirSync, readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { CHECKS, checkHistory } from '../../../src/observed/index.ts';
import { CONTEXT, soundHistory } from './histories.ts';

it('finds no deviation in a sound history of a task, its callback, a list page, a replay and text calls', () => {
  expect(checkHistory(soundHistory(), CONTEXT)).toEqual([]);
});

it('finds none in an empty history', () => {
  expect(checkHistory({})).toEqual([]);
});

it('lists every check once, each with what it holds', () => {
  const ids = CHECKS.map((c) => c.id);
  expect(new Set(ids).size).toBe(ids.length);
  for (const check of CHECKS) {
    expect(check.id).toMatch(/^[a-z]+(\.[a-z-]+)+$/);
    expect(check.holds.length).toBeGreaterThan(10);
  }
});

it('reuses the ids the checking proxy already reports for the same rules', () => {
  const ids = CHECKS.map((c) => c.id);
  expect(ids).toEqual(expect.arrayContaining(['lifecycle.status.forward-only', 'billing.points.settled', 'wire.time.beijing']));
});

it('has a breaking history for every check in this folder’s tests', () => {
  const dir = new URL('.', import.meta.url);
  const tests = readdirSync(dir).filter((f) => f.endsWith('.test.ts') && f !== 'sound.test.ts').map((f) => readFileSync(new URL(f, dir), 'utf8')).join('\n');
  expect(CHECKS.map((c) => c.id).filter((id) => !tests.includes(`'${id}'`))).toEqual([]);
});
