import type { Exchange } from '../client.ts';
import type { CheckContext } from '../types.ts';

export const POINTS = /^-?\d+\.\d{3}$/;
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
  error: { code: string } | null;
  started_at: string | null;
  finished_at: string | null;
  output: unknown;
}

export const body = <T>(exchange: Exchange): T => exchange.json as T;

/** Submits a task and cancels it again at once, so a real deployment refunds it. */
export async function submitAndCancel(ctx: CheckContext, payload: Record<string, unknown>, headers: Record<string, string> = {}): Promise<{ submitted: Exchange; canceled: Exchange }> {
  const submitted = await ctx.api.request('POST', '/v1/tasks', { body: payload, headers });
  ctx.expect(submitted.status === 200, 'submit answers 200', submitted, 200, submitted.status);
  const canceled = await ctx.api.request('POST', `/v1/tasks/${body<TaskBody>(submitted).id}/cancel`);
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
    const task = body<TaskBody>(got);
    if (TERMINAL.includes(task.status)) return { task, intervals, last: got };
    ctx.expect(waited < maxSeconds, `task ends within ${maxSeconds} s`, got, 'a terminal status', task.status);
    interval = Math.min(30, Math.ceil(interval * 1.5));
  }
}
