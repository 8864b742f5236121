import { Webhook } from 'standardwebhooks';
import { expect } from 'vitest';
import type { Acknowledged, Prng } from './acknowledged.ts';
import { clientOf, eventually, expectStatus } from './emulator-process.ts';
import type { Client } from './emulator-process.ts';
import { checkLedger, TERMINAL } from './invariants.ts';
import type { Listed, Task } from './invariants.ts';
import { endOf, leastRankAt, PAST_EVERY_DEADLINE_SECONDS, rankOf } from './plans.ts';
import type { WireScenario } from '../support/wire-task.ts';
import type { Received } from '../support/receiver.ts';

/**
 * What a restarted emulator must show: every acknowledged task, cancel, idempotency key, text call and clock
 * position; the points invariants of every account; then, once the clock runs past every deadline, every task
 * ended as its scenario says and called back with a verified signature.
 */

export interface Restarted {
  base: string;
  admin: Client;
  acked: Acknowledged;
  plans: Map<string, WireScenario>;
}

/** Every task of the test accounts, by id, once the points invariants of every account are checked. */
async function allTasks(r: Restarted): Promise<Map<string, Listed>> {
  const tasks = await Promise.all(r.acked.accounts.map((a) => checkLedger(r.admin, a, r.acked)));
  return new Map(tasks.flat().map((listed) => [listed.task.id, listed]));
}

/** Checks what was acknowledged before the kill; `sample` picks which older tasks are queried and replayed one by one. */
export async function checkAcknowledged(r: Restarted, round: number, sample: Prng): Promise<{ unfinished: string[] }> {
  const clock = Date.parse(expectStatus<{ now: string }>(await r.admin.get('/_emulator/clock'), 200, 'clock').now);
  expect(clock, 'the clock resumes no earlier than an answered advance left it').toBeGreaterThanOrEqual(r.acked.clockMs);

  // Accounts the clients never touch (the demo account) keep their invariants too.
  const accounts = expectStatus<{ data: { id: string }[] }>(await r.admin.get('/_emulator/accounts'), 200, 'accounts').data;
  for (const { id } of accounts) if (!r.acked.accounts.some((a) => a.id === id)) await checkLedger(r.admin, { id }, r.acked);
  const tasks = await allTasks(r);
  // Virtual time never runs backwards across a restart: nothing stored happened after the clock's now.
  for (const { task } of tasks.values()) {
    for (const time of [task.created_at, task.started_at, task.finished_at]) {
      if (time !== null) expect(Date.parse(time), `task ${task.id}: a stored time after the restarted clock`).toBeLessThanOrEqual(clock);
    }
  }
  for (const acked of r.acked.tasks.values()) {
    const listed = tasks.get(acked.id);
    expect(listed, `acknowledged task ${acked.id} (round ${acked.round}) is gone`).toBeDefined();
    if (!listed) continue;
    const { task } = listed;
    expect([task.model, task.points.frozen, listed.account_id, listed.scenario], `task ${acked.id}`).toEqual([acked.model, acked.frozen, acked.accountId, acked.scenario]);
    if (r.acked.canceled.has(acked.id)) {
      expect(task.status, `task ${acked.id} was answered canceled`).toBe('canceled');
      continue;
    }
    const plan = r.plans.get(listed.scenario) as WireScenario;
    const least = leastRankAt(plan, task.model, acked.createdAt, r.acked.clockMs);
    const why = `task ${acked.id} (${listed.scenario}, created ${acked.createdAt}, round ${acked.round}) is ${task.status}, but the clock was answered at ${new Date(r.acked.clockMs).toISOString()}`;
    expect(rankOf(task.status), `${why}: a transition due before then was lost`).toBeGreaterThanOrEqual(least);
  }

  // The public API too: this round's tasks one by one, and a few older ones.
  const older = [...r.acked.tasks.values()].filter((t) => t.round < round);
  const probe = [...r.acked.tasks.values()].filter((t) => t.round === round);
  for (let i = 0; i < 10 && older.length > 0; i += 1) probe.push(sample.pick(older));
  await Promise.all(
    probe.map(async (acked) => {
      const client = clientOf(r.base, acked.key);
      const task = expectStatus<Task>(await client.get(`/v1/tasks/${acked.id}`), 200, `GET /v1/tasks/${acked.id}`);
      expect([task.id, task.model, task.points.frozen]).toEqual([acked.id, acked.model, acked.frozen]);
      if (!acked.idempotency) return;
      const replay = await client.post('/v1/tasks', acked.idempotency.body, acked.idempotency.headers);
      expect(replay.status, `replay of ${acked.idempotency.key}: ${JSON.stringify(replay.body)}`).toBe(200);
      expect([(replay.body as Task).id, replay.headers.get('idempotent-replayed')], `replay of ${acked.idempotency.key}`).toEqual([acked.id, 'true']);
    }),
  );
  // The replays froze nothing: the invariants again.
  const after = await allTasks(r);
  expect(after.size, 'a replay created a task').toBe(tasks.size);
  return { unfinished: [...after.values()].filter((l) => !TERMINAL.has(l.task.status)).map((l) => l.task.id) };
}

/** Runs the clock past every deadline: every task ends as its scenario says, or canceled if a cancel was sent. */
export async function finishEverything(r: Restarted): Promise<Map<string, Listed>> {
  const advanced = expectStatus<{ now: string }>(await r.admin.post('/_emulator/clock/advance', { seconds: PAST_EVERY_DEADLINE_SECONDS }), 200, 'advance');
  r.acked.clockMs = Math.max(r.acked.clockMs, Date.parse(advanced.now));
  const tasks = await allTasks(r);
  for (const { task, scenario } of tasks.values()) {
    const what = `task ${task.id} on ${scenario}`;
    if (r.acked.canceled.has(task.id) || (task.status === 'canceled' && r.acked.cancelSent.has(task.id))) {
      expect([task.status, task.error?.code], what).toEqual(['canceled', 'canceled']);
      continue;
    }
    const end = endOf(r.plans.get(scenario) as WireScenario);
    expect([task.status, task.error?.code ?? null], what).toEqual([end.status, end.code]);
  }
  return tasks;
}

interface Delivery {
  id: string;
  task_id: string | null;
  type: string;
  body: string;
  status: 'pending' | 'delivered' | 'failed';
}

/**
 * Every finished task was called back: one message per task, delivered, reaching the receiver with the same bytes
 * every time (a copy sent again after a kill keeps its webhook-id), signed for the account's secret, carrying the
 * task as it ended; and no message about a task under any other id (an end the kill lost, called back anyway).
 * @see reference "Events": one callback per task, verified with the Standard Webhooks scheme
 */
export async function checkCallbacks(r: Restarted, tasks: Map<string, Listed>, received: Received[]): Promise<void> {
  const deliveriesOf = async (accountId: string): Promise<Delivery[]> =>
    expectStatus<{ data: Delivery[] }>(await r.admin.get(`/_emulator/webhooks/deliveries?account=${accountId}`), 200, 'deliveries').data;
  const idOf = (got: Received): string => String(got.headers['webhook-id']);
  const settled = await eventually(async () => {
    const got = new Set(received.map(idOf));
    const all = (await Promise.all(r.acked.accounts.map((a) => deliveriesOf(a.id)))).flat();
    return all.every((d) => d.status === 'delivered' && got.has(d.id));
  });
  expect(settled, 'every callback message delivered and received').toBe(true);

  for (const account of r.acked.accounts) {
    const hook = new Webhook(account.secret);
    const byTask = new Map<string, Delivery>();
    for (const delivery of await deliveriesOf(account.id)) {
      if (delivery.task_id === null) continue;
      expect(byTask.has(delivery.task_id), `task ${delivery.task_id}: a second message ${delivery.id}`).toBe(false);
      byTask.set(delivery.task_id, delivery);
    }
    for (const { task, account_id } of tasks.values()) {
      if (account_id !== account.id) continue;
      expect(byTask.get(task.id)?.type, `finished task ${task.id}: its callback`).toBe(`task.${task.status}`);
    }
    for (const got of received) {
      const body = got.raw.toString('utf8');
      const envelope = JSON.parse(body) as { type: string; timestamp: string; data: Task };
      const listed = tasks.get(envelope.data.id);
      if (listed?.account_id !== account.id) continue;
      const delivery = byTask.get(listed.task.id) as Delivery;
      const what = `message ${idOf(got)} (${envelope.type}) about task ${listed.task.id}`;
      expect(idOf(got), `${what}: the task's message is ${delivery.id} (${delivery.type})`).toBe(delivery.id);
      expect(body, `${what}: every copy carries the same bytes`).toBe(delivery.body);
      const headers = Object.fromEntries(Object.entries(got.headers).map(([k, v]) => [k, String(v)]));
      expect(hook.verify(body, headers), `${what}: verified, the task as it ended`).toEqual({ type: `task.${listed.task.status}`, timestamp: envelope.timestamp, data: listed.task });
    }
  }
}
