import type { Exchange } from '../../wire/index.ts';
import { CheckFailure } from '../client.ts';
import type { KeySettings } from '../setup.ts';
import type { Check, CheckContext } from '../types.ts';
import { body, expectError, needAnswer, scenario } from './shared.ts';
import type { TaskBody } from './shared.ts';

// These checks provoke what an answer says happened (a submission, its replay, a cancel) and each refusal that
// says nothing happened, then read what followed: the account's balance around each answer (through the control
// API when there is one), the task, and the first page of the account's list. They hold little themselves: the
// rules of behaviour (src/observed/consequences.ts and the billing rules) judge those reads, here and in the
// checking proxy alike.

const QUEUED = scenario('timeout-in-queue');
const run = (): string => `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;

/**
 * A notes submission made recognisable: a note and metadata of its own, which a task it created would carry, so
 * the rules can tell such a task from any other.
 */
function marked(id: string, what: string, input: Record<string, unknown> = { agree: true }): Record<string, unknown> {
  return { model: 'social-notes-data', input: { mode: 'note', note: `https://notes.example.com/n/${what}-${id}`, ...input }, metadata: { conformance: `${what}-${id}` } };
}

/** `request` between two reads of the account's balance when the control API gives them, else just `request`. */
const around = (ctx: CheckContext, request: () => Promise<Exchange>): Promise<Exchange> => (ctx.ownAccount ? ctx.ownAccount.aroundBalance(request) : request());

/**
 * A read for the rules to judge, not for the check: any answer will do (a read after a refusal that went wrong
 * must not hide the refusal's own failure).
 */
const readList = (ctx: CheckContext, options: { key?: string; status?: string } = {}): Promise<Exchange> =>
  ctx.api.request('GET', `/v1/tasks?limit=20${options.status ? `&status=${options.status}` : ''}`, { unchecked: true, ...(options.key ? { key: options.key } : {}) });
const readTask = (ctx: CheckContext, id: string): Promise<Exchange> => ctx.api.request('GET', `/v1/tasks/${encodeURIComponent(id)}`, { unchecked: true });

const LIMITED: readonly [string, KeySettings, number, string][] = [
  ['over-quota', { quota: { points: '10.000', period: 'daily' } }, 402, 'key_quota_exceeded'],
  ['not-permitted', { models: ['avatar-photo'] }, 403, 'permission_denied'],
  ['over-rate', { rpm: 1 }, 429, 'rate_limited'],
];

export const consequenceChecks: Check[] = [
  {
    id: 'exercise.consequences.claims',
    group: 'tasks',
    title: 'a submission, its idempotent replay and a cancel, each with the balance read around it, then the task read at once and after the time it would have run, the list and the list of canceled tasks',
    cost: 40,
    async run(ctx) {
      const id = run();
      const payload = marked(id, 'claims');
      const headers = { 'Idempotency-Key': `conformance-claims-${id}` };
      // The default scenario: queued a moment, then generated and charged. A cancel that is not held shows it so.
      const submitted = await around(ctx, () => ctx.api.request('POST', '/v1/tasks', { body: payload, headers }));
      needAnswer(submitted);
      const task = body<TaskBody>(submitted).id;
      needAnswer(await around(ctx, () => ctx.api.request('POST', '/v1/tasks', { body: payload, headers })));
      await readTask(ctx, task);
      const canceled = await around(ctx, () => ctx.api.request('POST', `/v1/tasks/${task}/cancel`));
      // A deployment may have started it already: its refusal is then what later reads are held to.
      ctx.expect(canceled.status === 200 || canceled.status === 409, 'the cancel is answered 200 or 409 task_not_cancelable', canceled, '200 or 409', canceled.status);
      await readTask(ctx, task);
      await ctx.wait(10);
      await readTask(ctx, task);
      await readList(ctx);
      await readList(ctx, { status: 'canceled' });
    },
  },
  {
    id: 'exercise.consequences.refusals',
    group: 'tasks',
    title: 'refusals that change nothing — 404 model_unavailable, 422 invalid_params, 409 idempotency_conflict, 409 task_not_cancelable — each with the balance read around it, the list read before and after, and the task they name',
    cost: 40,
    async run(ctx) {
      const id = run();
      const key = { ...QUEUED, 'Idempotency-Key': `conformance-conflict-${id}` };
      let owner: string | null = null;
      let canceled = false;
      await readList(ctx);
      try {
        const unknown = await around(ctx, () => ctx.api.request('POST', '/v1/tasks', { body: { ...marked(id, 'unknown-model'), model: 'svc-no-such-model' }, headers: QUEUED }));
        expectError(ctx, unknown, 404, 'model_unavailable');
        // No `agree`: the usage notice must be acknowledged.
        const invalid = await around(ctx, () => ctx.api.request('POST', '/v1/tasks', { body: marked(id, 'invalid', {}), headers: QUEUED }));
        expectError(ctx, invalid, 422, 'invalid_params');
        const first = await around(ctx, () => ctx.api.request('POST', '/v1/tasks', { body: marked(id, 'owner'), headers: key }));
        needAnswer(first);
        owner = body<TaskBody>(first).id;
        const conflict = await around(ctx, () => ctx.api.request('POST', '/v1/tasks', { body: marked(id, 'conflict'), headers: key }));
        expectError(ctx, conflict, 409, 'idempotency_conflict');
        await readTask(ctx, owner);
        const ownerId = owner;
        const cancel = await around(ctx, () => ctx.api.request('POST', `/v1/tasks/${ownerId}/cancel`));
        needAnswer(cancel);
        canceled = true;
        const again = await around(ctx, () => ctx.api.request('POST', `/v1/tasks/${ownerId}/cancel`));
        expectError(ctx, again, 409, 'task_not_cancelable');
      } finally {
        if (owner !== null && !canceled) await ctx.api.request('POST', `/v1/tasks/${owner}/cancel`, { unchecked: true });
        if (owner !== null) await readTask(ctx, owner);
        await readList(ctx);
        await readList(ctx, { status: 'canceled' });
      }
    },
  },
  {
    id: 'exercise.consequences.key-limits',
    group: 'limits',
    title: "refusals by a key's limits that change nothing — 402 key_quota_exceeded, 403 permission_denied, 429 rate_limited — through keys of the suite's own account, each with the balance read around it and the list read before and after through the same key",
    cost: 0,
    needs: ['admin'],
    async run(ctx) {
      const own = ctx.ownAccount;
      if (!own) throw new CheckFailure("no control API for the suite's own account", null);
      const id = run();
      for (const [what, settings, status, code] of LIMITED) {
        const key = await own.key(settings);
        // The rate-limited key's one request of its minute.
        await readList(ctx, { key });
        try {
          const refused = await own.aroundBalance(() => ctx.api.request('POST', '/v1/tasks', { body: marked(id, what), headers: QUEUED, key }));
          expectError(ctx, refused, status, code);
          if (status === 429) await ctx.wait(Math.min(60, Math.max(1, Number(refused.headers.get('retry-after')) || 60)));
        } finally {
          // Through the same key: a history kept per key (the proxy's) has both reads of what the refusal left.
          await readList(ctx, { key });
        }
      }
    },
  },
];
