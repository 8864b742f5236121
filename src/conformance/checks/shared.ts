import { errorOf } from '../../wire/index.ts';
import type { Exchange } from '../../wire/index.ts';
import { CheckFailure } from '../client.ts';
import type { CheckContext } from '../types.ts';

export const TERMINAL = ['succeeded', 'failed', 'canceled'];

export const notesInput = (note = 'https://notes.example.com/n/conformance'): Record<string, unknown> => ({
  model: 'social-notes-data',
  input: { mode: 'note', note, agree: true },
});

export interface TaskBody {
  id: string;
  status: string;
  points: { frozen: string; charged: string; refunded: string };
  input: Record<string, unknown>;
  metadata: Record<string, string>;
  error: { code: string; message?: string } | null;
  created_at?: string;
  started_at: string | null;
  finished_at: string | null;
  output: unknown;
}

export const body = <T>(exchange: Exchange): T => exchange.json as T;

/**
 * An answer the check needs before it can check anything further (the submission of a task it then reads, say):
 * any other status ends the check here, naming this request, its status and error. Going on would only fail
 * later on what is missing (`GET /v1/tasks/undefined`), naming a request that is not the cause.
 */
export function needAnswer(exchange: Exchange, status = 200): void {
  if (exchange.status === status) return;
  const { code, message } = errorOf(exchange);
  const error = `${code ? ` ${code}` : ''}${message ? ` (${message})` : ''}`;
  throw new CheckFailure(`${exchange.method} ${exchange.path} answered ${exchange.status}${error}, not ${status}`, exchange, status, exchange.status);
}

/** Submits a task the check goes on with: anything but 200 ends the check, naming the submission. */
export async function submitTask(ctx: CheckContext, payload: Record<string, unknown>, headers: Record<string, string> = {}): Promise<{ submitted: Exchange; task: TaskBody }> {
  const submitted = await ctx.api.request('POST', '/v1/tasks', { body: payload, headers });
  needAnswer(submitted);
  return { submitted, task: body<TaskBody>(submitted) };
}

/** Submits a task and cancels it again at once, so a real deployment refunds it; either answer not 200 ends the check. */
export async function submitAndCancel(ctx: CheckContext, payload: Record<string, unknown>, headers: Record<string, string> = {}): Promise<{ submitted: Exchange; canceled: Exchange }> {
  const { submitted, task } = await submitTask(ctx, payload, headers);
  const canceled = await ctx.api.request('POST', `/v1/tasks/${task.id}/cancel`);
  needAnswer(canceled);
  return { submitted, canceled };
}

/** Expects a 4xx with `code` in the general error shape, and `details` naming `field` when given. */
export function expectError(ctx: CheckContext, exchange: Exchange, status: number, code: string, field?: string): void {
  ctx.expect(exchange.status === status, `answers ${status}`, exchange, status, exchange.status);
  const error = (exchange.json as { error?: { code?: string; details?: { field: string }[] } } | undefined)?.error;
  ctx.expect(error?.code === code, `error.code is ${code}`, exchange, code, error?.code);
  if (field !== undefined) {
    const fields = (error?.details ?? []).map((d) => d.field);
    ctx.expect(fields.includes(field), `details name ${field}`, exchange, field, fields);
  }
}

/** Polls a task as the reference advises: first after 3 s, growing to at most 30 s, until it is terminal. */
export async function pollUntilTerminal(
  ctx: CheckContext,
  id: string,
  maxSeconds: number,
): Promise<{ task: TaskBody; intervals: number[]; last: Exchange }> {
  const intervals: number[] = [];
  let waited = 0;
  let interval = 3;
  for (;;) {
    await ctx.wait(interval);
    waited += interval;
    intervals.push(interval);
    const got = await ctx.api.request('GET', `/v1/tasks/${id}`);
    needAnswer(got);
    const task = body<TaskBody>(got);
    if (TERMINAL.includes(task.status)) return { task, intervals, last: got };
    ctx.expect(waited < maxSeconds, `task ends within ${maxSeconds} s`, got, 'a terminal status', task.status);
    interval = Math.min(30, Math.ceil(interval * 1.5));
  }
}

/** The error codes the reference lists for a failed or canceled task ("Task failure reasons"). */
export const TASK_FAILURE_CODES = ['invalid_params', 'content_rejected', 'insufficient_points', 'timeout', 'service_unavailable', 'capacity_shortage', 'generation_failed', 'no_result', 'canceled'];

/** The emulator's per-request scenario (scenarios/*.yaml); other deployments ignore the header. */
export const scenario = (name: string): Record<string, string> => ({ 'X-Emulator-Scenario': name });

/** A task ended without a result refunds in full: nothing charged, all that was frozen refunded, no output, an end time. */
export function expectRefundedEnd(ctx: CheckContext, exchange: Exchange, task: TaskBody): void {
  ctx.expect(task.points.charged === '0.000', 'nothing charged', exchange, '0.000', task.points.charged);
  ctx.expect(task.points.refunded === task.points.frozen, 'refunded = frozen (a full refund)', exchange, task.points.frozen, task.points.refunded);
  ctx.expect(task.finished_at !== null, 'finished_at set', exchange, 'a time', task.finished_at);
  ctx.expect(task.output === null, 'output null', exchange, null, task.output);
  ctx.expect(typeof task.error?.message === 'string' && task.error.message !== '', 'error.message says why', exchange, 'a message', task.error);
}
