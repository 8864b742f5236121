import { expect, it } from 'vitest';
import { IdMap } from '../../src/parity/ids.ts';
import { maskOf } from '../../src/parity/index.ts';

// What a replay learns of the ids the deployment gave, and where it must not guess.

const task = (id: string): Record<string, unknown> => ({ id, object: 'task', status: 'queued' });

it('learns a task id from a submission and writes it into later requests, whole', () => {
  const ids = new IdMap();
  ids.learn(task('T261123093000ABCDEF'), task('T261124100000ZZZZZZ'));
  expect(ids.rewrite('/v1/tasks/T261123093000ABCDEF/cancel')).toBe('/v1/tasks/T261124100000ZZZZZZ/cancel');
  expect(ids.rewrite('T261123093000ABCDEFG')).toBe('T261123093000ABCDEFG');
});

it('learns nothing from a list: its items pair by position, and a task from before the recording has no counterpart', () => {
  const ids = new IdMap();
  ids.learn({ object: 'list', data: [task('T261123093000OLDONE')], has_more: false }, { object: 'list', data: [task('T261124100000OTHER1')], has_more: false });
  expect(ids.size).toBe(0);
  expect(ids.rewrite('/v1/tasks/T261123093000OLDONE')).toBe('/v1/tasks/T261123093000OLDONE');
});

it('masks every marker the recorder writes, the bearer token one included', () => {
  for (const recorded of ['[redacted]', 'sk-[redacted]', 'see [redacted bearer token] here']) {
    expect(maskOf({ path: ['note'], key: 'note', parent: undefined, recorded, replayed: 'other', redacted: false }), recorded).toBe('redacted');
  }
});
