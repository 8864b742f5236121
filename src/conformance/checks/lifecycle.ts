import Big from 'big.js';
import type { Check } from '../types.ts';
import { POINTS } from '../../wire/index.ts';
import { notesInput, pollUntilTerminal, submitTask } from './shared.ts';

export const lifecycleChecks: Check[] = [
  {
    id: 'lifecycle.poll.to-terminal',
    group: 'lifecycle',
    title: 'a task polled as advised (3 s, growing to 30 s) reaches a terminal state within its maximum time, settled',
    cost: 40,
    async run(ctx) {
      const { task: submitted } = await submitTask(ctx, notesInput());
      const { task, intervals, last } = await pollUntilTerminal(ctx, submitted.id, 11 * 60);
      ctx.expect((intervals[0] ?? 0) >= 3 && intervals.every((i) => i <= 30), 'polled at 3 s growing to at most 30 s', null, '3..30', intervals);
      ctx.expect(task.finished_at !== null, 'finished_at set', last, 'a time', task.finished_at);
      for (const value of Object.values(task.points)) ctx.expect(POINTS.test(value), 'three decimals', last, 'd.ddd', value);
      ctx.expect(new Big(task.points.charged).plus(task.points.refunded).eq(task.points.frozen), 'frozen = charged + refunded', last, task.points.frozen, task.points);
      if (task.status === 'succeeded') {
        ctx.expect(task.started_at !== null && task.error === null && task.output !== null, 'a success has started_at and output, no error', last, 'output', task);
      } else {
        ctx.expect(task.error !== null && task.output === null && task.points.charged === '0.000', 'a failure has error, no output, nothing charged', last, 'error', task);
      }
    },
  },
];
