import { expect } from 'vitest';
import { expectedFreeze, prng, taskBody } from './acknowledged.ts';
import type { Acknowledged, AckedTask, Prng } from './acknowledged.ts';
import { adminOf, clientOf } from './emulator-process.ts';
import type { CliEmulator, Client } from './emulator-process.ts';

/**
 * Parallel clients against a live emulator until it is killed (or they are stopped): submissions on every kind of
 * scenario (some with an Idempotency-Key), idempotent replays, cancels, queries, text calls (plain and streamed) and
 * clock advances. Each answer is checked as it comes and, when it is a 200, recorded as acknowledged; a request the
 * kill cut off simply failed. A client that fails before the kill fails the test.
 */

/** Scenarios a submission asks for (`null`: no header, the default scenario); `rejected` never creates a task. */
const SCENARIOS = [
  null,
  'default',
  'instant',
  'instant',
  'slow',
  'cancelable',
  'cancelable',
  'timeout',
  'timeout-in-queue',
  'invalid_params',
  'content_rejected',
  'service_unavailable',
  'capacity_shortage',
  'generation_failed',
  'no_result',
  'insufficient_points',
  'rejected',
] as const;

const ADVANCES = [0, 1, 2, 5, 10, 30, 60, 120, 600];

export type Op = 'submit' | 'replay' | 'cancel' | 'get' | 'text' | 'advance';
/** The mix each client draws its next request from, unless told another. */
const OPS: readonly Op[] = ['submit', 'submit', 'submit', 'submit', 'submit', 'replay', 'cancel', 'cancel', 'get', 'text', 'text', 'advance'];

export interface LoadOptions {
  cli: CliEmulator;
  acked: Acknowledged;
  round: number;
  seed: number;
  clients: number;
  /** Runs beside the clients; when it resolves the process is killed, or with `stopOnly` the clients stop. */
  until(admin: Client): Promise<void>;
  /** Stop the clients (letting what they sent be answered) instead of killing the process. */
  stopOnly?: boolean;
  /** The mix of requests (default OPS). */
  ops?: readonly Op[];
}

export interface LoadResult {
  /** Answers per operation. */
  answered: Record<Op, number>;
  /** Requests the kill cut off. */
  cut: number;
}

interface Context extends LoadOptions {
  admin: Client;
  /** The clients stop (and, unless `stopOnly`, the process is killed). */
  ending: boolean;
  result: LoadResult;
  count: number;
}

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const ctx: Context = {
    ...options,
    admin: adminOf(options.cli),
    ending: false,
    result: { answered: { submit: 0, replay: 0, cancel: 0, get: 0, text: 0, advance: 0 }, cut: 0 },
    count: 0,
  };
  const clients = Array.from({ length: options.clients }, (_, i) => runClient(ctx, prng(options.seed * 7919 + i)));
  try {
    // A client that fails ends the load at once instead of waiting for the end.
    await Promise.race([options.until(ctx.admin), Promise.all(clients)]);
  } finally {
    ctx.ending = true;
    if (!options.stopOnly) {
      options.cli.child.kill('SIGKILL');
      await options.cli.exited;
    }
  }
  await Promise.all(clients);
  return ctx.result;
}

async function runClient(ctx: Context, rng: Prng): Promise<void> {
  while (!ctx.ending) {
    const op = rng.pick(ctx.ops ?? OPS);
    ctx.count += 1;
    try {
      await OPERATIONS[op](ctx, rng, ctx.count);
      ctx.result.answered[op] += 1;
    } catch (err) {
      // Only the kill may cut a request off; an assertion that failed is a failure whenever it happens.
      if (!ctx.ending || ctx.stopOnly || !isCut(err)) throw err;
      ctx.result.cut += 1;
    }
  }
}

/** A request the kill cut off: no whole answer (the connection dropped, the time ran out, the body was cut short). */
export const isCut = (err: unknown): boolean =>
  err instanceof TypeError || (err instanceof Error && ['AbortError', 'TimeoutError', 'SyntaxError'].includes(err.name));

/** An acknowledged task, mostly a recent one (more of those are still unfinished). */
function someTask(ctx: Context, rng: Prng, filter: (task: AckedTask) => boolean = () => true): AckedTask | undefined {
  const tasks = [...ctx.acked.tasks.values()].filter(filter);
  return rng.int(4) === 0 ? rng.pick(tasks) : tasks.slice(-20)[rng.int(Math.min(20, tasks.length))];
}

const OPERATIONS: Record<Op, (ctx: Context, rng: Prng, n: number) => Promise<void>> = {
  async submit(ctx, rng, n) {
    const account = rng.pick(ctx.acked.accounts);
    const body = taskBody(rng, n);
    const scenario = rng.pick(SCENARIOS);
    const headers: Record<string, string> = scenario === null ? {} : { 'X-Emulator-Scenario': scenario };
    const idempotencyKey = rng.int(5) < 2 ? `crash-${ctx.round}-${n}` : null;
    if (idempotencyKey !== null) headers['Idempotency-Key'] = idempotencyKey;
    const reply = await clientOf(ctx.cli.base, account.key).post('/v1/tasks', body, headers);
    if (scenario === 'rejected') {
      expect(reply.status, JSON.stringify(reply.body)).toBe(422);
      return;
    }
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    const task = reply.body as { id: string; model: string; status: string; created_at: string; points: { frozen: string } };
    expect([task.model, task.status, task.points.frozen]).toEqual([body.model, 'queued', expectedFreeze(body)]);
    ctx.acked.tasks.set(task.id, {
      id: task.id,
      model: task.model,
      frozen: task.points.frozen,
      createdAt: task.created_at,
      accountId: account.id,
      key: account.key,
      scenario: scenario ?? 'default',
      round: ctx.round,
      idempotency: idempotencyKey === null ? null : { key: idempotencyKey, body, headers },
    });
  },

  async replay(ctx, rng) {
    const task = someTask(ctx, rng, (t) => t.idempotency !== null);
    if (!task?.idempotency) return;
    const reply = await clientOf(ctx.cli.base, task.key).post('/v1/tasks', task.idempotency.body, task.idempotency.headers);
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect([(reply.body as { id: string }).id, reply.headers.get('idempotent-replayed')]).toEqual([task.id, 'true']);
  },

  async cancel(ctx, rng) {
    const task = someTask(ctx, rng);
    if (!task) return;
    ctx.acked.cancelSent.add(task.id);
    const reply = await clientOf(ctx.cli.base, task.key).post(`/v1/tasks/${task.id}/cancel`);
    if (reply.status === 200) {
      expect((reply.body as { status: string }).status).toBe('canceled');
      ctx.acked.canceled.add(task.id);
    } else {
      expect([reply.status, (reply.body as { error: { code: string } }).error.code]).toEqual([409, 'task_not_cancelable']);
    }
  },

  async get(ctx, rng) {
    const task = someTask(ctx, rng);
    if (!task) return;
    const reply = await clientOf(ctx.cli.base, task.key).get(`/v1/tasks/${task.id}`);
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect((reply.body as { id: string }).id).toBe(task.id);
  },

  async text(ctx, rng, n) {
    const account = rng.pick(ctx.acked.accounts);
    const stream = rng.int(2) === 0;
    // Now and then a slow one (800 ms to the first token, then 40 ms a chunk), more likely to be cut by the kill.
    const headers: Record<string, string> = rng.int(6) === 0 ? { 'X-Emulator-Scenario': 'text-slow' } : {};
    const body = { model: 'svc-text-lite', messages: [{ role: 'user', content: `Say hello, number ${n}.` }], max_tokens: 32, stream };
    const reply = await clientOf(ctx.cli.base, account.key).post('/v1/chat/completions', body, headers);
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    // A streamed answer is whole only with its last event.
    if (stream) expect(String(reply.body).trimEnd().endsWith('data: [DONE]')).toBe(true);
    ctx.acked.textCalls.set(reply.headers.get('x-request-id') ?? '', { accountId: account.id, round: ctx.round });
  },

  async advance(ctx, rng) {
    const reply = await ctx.admin.post('/_emulator/clock/advance', { seconds: rng.pick(ADVANCES) });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    ctx.acked.clockMs = Math.max(ctx.acked.clockMs, Date.parse((reply.body as { now: string }).now));
  },
};
