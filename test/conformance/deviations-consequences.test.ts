import { expect, it } from 'vitest';
import type { Answer, Forwarded } from './deviating.ts';
import { deviate, editJson, expectAltered, expectFailedExactly, expectFailure, is, runAgainst, useDeviations } from './deviating.ts';

// The consequences of an answer, held to what was read after it (src/conformance/checks/consequences.ts provokes,
// src/observed/consequences.ts judges): deployments whose answers say one thing while the account shows another.

useDeviations();

/** The `metadata.conformance` mark of a submission the consequence checks sent ("claims-…", "conflict-…"). */
const markOf = (req: Forwarded): string => {
  if (!is(req, 'POST', /^\/v1\/tasks$/)) return '';
  const body = JSON.parse(req.body || '{}') as { metadata?: { conformance?: unknown } };
  return typeof body.metadata?.conformance === 'string' ? body.metadata.conformance : '';
};

/** The answer a refusing deployment gives in the general error shape, with the request id of the answer it replaces. */
function refusal(answer: Answer, status: number, code: string, details?: { field: string; message: string }[]): Answer {
  const requestId = answer.headers['x-request-id'] ?? '';
  const headers = { ...answer.headers, 'content-type': 'application/json; charset=utf-8' };
  return { status, headers, body: JSON.stringify({ error: { code, message: `refused (${code})`, request_id: requestId, ...(details ? { details } : {}) } }) };
}

it('fails tasks.cancel.held-to-reads, billing.balance.moves and lifecycle.status.forward-only on a cancel answered canceled and refunded while the task runs on and is charged', async () => {
  const claimed = new Set<string>();
  const reads: string[] = [];
  const p = await deviate({
    // The cancel never reaches the service: the task it names is read instead, and answered as if canceled.
    request(req) {
      const id = /^\/v1\/tasks\/(\w+)\/cancel$/.exec(req.path)?.[1];
      if (req.method !== 'POST' || !id || !claimed.has(id)) return undefined;
      return { ...req, method: 'GET', path: `/v1/tasks/${id}`, body: '' };
    },
    answer(answer, req) {
      if (markOf(req).startsWith('claims-') && answer.status === 200) claimed.add((JSON.parse(answer.body) as { id: string }).id);
      const read = JSON.parse(answer.body || '{}') as { id?: string; status?: string; points?: { charged?: string } };
      if (req.method === 'GET' && read.id !== undefined && claimed.has(read.id)) reads.push(`${read.status ?? '?'} ${read.points?.charged ?? '?'}`);
      const id = /^\/v1\/tasks\/(\w+)\/cancel$/.exec(req.path)?.[1];
      if (!id || !claimed.has(id)) return undefined;
      return editJson(answer, (task) => {
        const points = task['points'] as Record<string, string>;
        Object.assign(task, { status: 'canceled', finished_at: task['created_at'], error: { code: 'canceled', message: 'Canceled by the caller.' }, points: { ...points, refunded: points['frozen'] } });
      });
    },
  });
  const only = ['exercise.consequences.claims', 'tasks.cancel.held-to-reads', 'billing.balance.moves', 'lifecycle.status.forward-only'];
  const report = await runAgainst(p, only);
  expectAltered(p, 'POST', /^\/v1\/tasks\/\w+\/cancel$/);
  expectFailedExactly(report, only, ['tasks.cancel.held-to-reads', 'billing.balance.moves', 'lifecycle.status.forward-only']);
  const [id] = claimed;
  // The canceled tasks do not hold it, the balance got nothing back, and the reads after the cancel went back.
  expectFailure(p, report, 'tasks.cancel.held-to-reads', {
    message: new RegExp(`^task ${id} \\(created [^)]+\\) was answered canceled by its cancel \\(req_\\w+\\) and is missing from the first page of canceled tasks read after it \\(req_\\w+, the last page\\) \\[req_\\w+, req_\\w+\\]$`),
    method: 'GET',
    path: '/v1/tasks?limit=20&status=canceled',
  });
  expectFailure(p, report, 'billing.balance.moves', { message: new RegExp(`^the balance moved by 0\\.000 around cancel of task ${id} \\(req_\\w+\\), expected 40\\.000`), method: 'POST', path: `/v1/tasks/${id}/cancel` });
  expectFailure(p, report, 'lifecycle.status.forward-only', { message: new RegExp(`^task ${id} was canceled \\(req_\\w+\\) and then queued \\(req_\\w+\\)`), method: 'GET', path: `/v1/tasks/${id}` });
  // Read after the time it would have run, it had run on and been charged.
  expect(reads).toEqual(['queued 0.000', 'queued 0.000', 'succeeded 40.000']);
});

it('fails tasks.refusal.creates-nothing and billing.refusal.changes-nothing on a 409 idempotency_conflict with a task created and points frozen behind it', async () => {
  const p = await deviate({
    // The key is lost on the way: the service creates a task of the conflicting body, which is then refused.
    request(req) {
      if (!markOf(req).startsWith('conflict-')) return undefined;
      const headers = Object.fromEntries(Object.entries(req.headers).filter(([name]) => name !== 'idempotency-key'));
      return { ...req, headers };
    },
    answer(answer, req) {
      return markOf(req).startsWith('conflict-') && answer.status === 200 ? refusal(answer, 409, 'idempotency_conflict') : undefined;
    },
  });
  const only = ['exercise.consequences.refusals', 'tasks.refusal.creates-nothing', 'billing.refusal.changes-nothing'];
  const report = await runAgainst(p, only);
  expectAltered(p, 'POST', /^\/v1\/tasks$/);
  expectFailedExactly(report, only, ['tasks.refusal.creates-nothing', 'billing.refusal.changes-nothing']);
  expectFailure(p, report, 'tasks.refusal.creates-nothing', {
    message: /^task T\w+ \(created [^)]+, read by req_\w+\) has the model, input and metadata of a submission answered 409 idempotency_conflict \(req_\w+\) and was created while it was under way; no submission was answered with it/,
    method: 'GET',
    path: '/v1/tasks?limit=20',
  });
  expectFailure(p, report, 'billing.refusal.changes-nothing', {
    message: /^the balance went from 99\d+\.000 to 99\d+\.000 around a submission answered 409 idempotency_conflict \(req_\w+\), which changes nothing/,
    method: 'POST',
    path: '/v1/tasks',
  });
});

it('fails billing.refusal.changes-nothing on a 422 invalid_params after which the balance dropped', async () => {
  const p = await deviate({
    // Accepted as if the usage notice had been acknowledged, then answered as the refusal it should have been.
    request(req) {
      if (!markOf(req).startsWith('invalid-')) return undefined;
      const body = JSON.parse(req.body) as { input: Record<string, unknown> };
      body.input['agree'] = true;
      return { ...req, body: JSON.stringify(body) };
    },
    answer(answer, req) {
      return markOf(req).startsWith('invalid-') && answer.status === 200 ? refusal(answer, 422, 'invalid_params', [{ field: 'input.agree', message: 'must be true' }]) : undefined;
    },
  });
  const only = ['exercise.consequences.refusals', 'billing.refusal.changes-nothing'];
  const report = await runAgainst(p, only);
  expectAltered(p, 'POST', /^\/v1\/tasks$/);
  expectFailedExactly(report, only, ['billing.refusal.changes-nothing']);
  const failure = expectFailure(p, report, 'billing.refusal.changes-nothing', {
    message: /^the balance went from (\d+)\.000 to \d+\.000 around a submission answered 422 invalid_params \(req_\w+\), which changes nothing \[req_\w+\]$/,
    method: 'POST',
    path: '/v1/tasks',
  });
  const [, before, after] = /from (\S+) to (\S+) /.exec(failure.message) ?? [];
  expect(Number(before) - Number(after)).toBe(40);
});

it("fails both refusal rules on a 402 key_quota_exceeded behind which the account's other key created a task", async () => {
  let main: string | null = null;
  const p = await deviate({
    // The quota is looked up on the wrong key: the account's first key, which has none.
    request(req) {
      if (req.path.startsWith('/v1/')) main ??= req.headers['authorization'] ?? null;
      if (!markOf(req).startsWith('over-quota-') || main === null) return undefined;
      return { ...req, headers: { ...req.headers, authorization: main } };
    },
    answer(answer, req) {
      return markOf(req).startsWith('over-quota-') && answer.status === 200 ? refusal(answer, 402, 'key_quota_exceeded') : undefined;
    },
  });
  const only = ['exercise.consequences.key-limits', 'tasks.refusal.creates-nothing', 'billing.refusal.changes-nothing'];
  const report = await runAgainst(p, only);
  expectAltered(p, 'POST', /^\/v1\/tasks$/);
  expectFailedExactly(report, only, ['tasks.refusal.creates-nothing', 'billing.refusal.changes-nothing']);
  expectFailure(p, report, 'tasks.refusal.creates-nothing', { message: /of a submission answered 402 key_quota_exceeded \(req_\w+\) and was created while it was under way/, method: 'GET', path: '/v1/tasks?limit=20' });
  expectFailure(p, report, 'billing.refusal.changes-nothing', { message: /around a submission answered 402 key_quota_exceeded/, method: 'POST', path: '/v1/tasks' });
});

it('fails tasks.submit.held-to-reads on a task answered to its submission that its query then does not find', async () => {
  let claimed: string | null = null;
  const p = await deviate({
    answer(answer, req) {
      if (markOf(req).startsWith('claims-') && answer.status === 200) claimed ??= (JSON.parse(answer.body) as { id: string }).id;
      if (claimed === null || !is(req, 'GET', new RegExp(`^/v1/tasks/${claimed}$`))) return undefined;
      return refusal(answer, 404, 'not_found');
    },
  });
  const only = ['exercise.consequences.claims', 'tasks.submit.held-to-reads'];
  const report = await runAgainst(p, only);
  expectAltered(p, 'GET', /^\/v1\/tasks\/T\w+$/);
  expectFailedExactly(report, only, ['tasks.submit.held-to-reads']);
  expectFailure(p, report, 'tasks.submit.held-to-reads', {
    message: new RegExp(`^task ${claimed ?? '?'} was answered to a submission \\(req_\\w+\\), then its query was answered 404 not_found \\(req_\\w+\\)`),
    method: 'GET',
    path: `/v1/tasks/${claimed ?? '?'}`,
  });
});
