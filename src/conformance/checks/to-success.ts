import type { Exchange } from '../../wire/index.ts';
import type { CheckContext } from '../types.ts';
import { pollUntilTerminal, scenario, submitTask } from './shared.ts';
import type { TaskBody } from './shared.ts';

/** The emulator's scenario that starts a task and succeeds it on the next clock step (scenarios/lifecycle.yaml). */
const INSTANT = scenario('instant');

/** The longest maximum processing time of the three models ("Limits"), and a minute more. */
const MAX_SECONDS = 61 * 60;

/** A task as it was submitted and as it ended, with the read that showed its end. */
export interface Ended {
  submitted: TaskBody;
  task: TaskBody & { model?: unknown };
  last: Exchange;
}

/**
 * Submits every payload steered to succeed at once, then polls each, as advised, until it ends: on the emulator a few
 * clock steps through the control API, so a check reads settled charges and result files without minutes of
 * waiting (the checks that use it need the control API). Each must have succeeded; anything else ends the check.
 */
export async function runToSuccess(ctx: CheckContext, payloads: readonly Record<string, unknown>[]): Promise<Ended[]> {
  const submitted: TaskBody[] = [];
  for (const payload of payloads) submitted.push((await submitTask(ctx, payload, INSTANT)).task);
  const ended: Ended[] = [];
  for (const task of submitted) {
    const { task: end, last } = await pollUntilTerminal(ctx, task.id, MAX_SECONDS);
    ctx.expect(end.status === 'succeeded', `task ${task.id} succeeded`, last, 'succeeded', end.status);
    ended.push({ submitted: task, task: end, last });
  }
  return ended;
}
