import Big from 'big.js';
import { afterEach, expect, it, onTestFailed } from 'vitest';
import { startReceiver } from '../support/receiver.ts';
import type { Answer, Received, Receiver } from '../support/receiver.ts';
import {
  advance,
  checkCallbacks,
  checkLedger,
  clockNow,
  codeOf,
  deliveriesOf,
  idsWithTwoPayloads,
  newAccount,
  note,
  ok,
  seeded,
  startLive,
  tasksOf,
  TERMINAL,
} from './live.ts';
import type { Client, Delivery, LedgerEntry, Live, NewAccount, Reply, Task } from './live.ts';
import type { WireScenario } from '../support/wire-task.ts';

// Races over a real port: many requests in flight at once (Promise.all over fetch), several accounts and keys
// made through the control API, a manual clock advanced while requests land, and a real callback receiver.
// Interleavings differ from run to run; the assertions are invariants that hold for every one of them. The
// mix of operations comes from a seeded generator (RACE_SEED overrides it), so a failure can be replayed.
// @see reference "POST /v1/tasks" rule 5, "States and transitions", "Events", "Limits"

const SEED = Number(process.env['RACE_SEED'] ?? 20261123);

let live: Live | undefined;
let receiver: Receiver | undefined;

afterEach(async () => {
  // Whatever the load, the emulator logged no failing job and no unexpected error.
  const logged = live?.logged ?? [];
  await live?.close();
  await receiver?.close();
  live = undefined;
  receiver = undefined;
  expect(logged).toEqual([]);
});

async function setUp(answer?: Answer): Promise<{ live: Live; receiver: Receiver }> {
  onTestFailed(() => console.error(`race suite seed: RACE_SEED=${SEED}`));
  receiver = await startReceiver(answer);
  live = await startLive();
  return { live, receiver };
}

const submit = (client: Client, body: unknown, headers: Record<string, string> = {}): Promise<Reply> =>
  client.post('/v1/tasks', body, headers);
const replayed = (reply: Reply): boolean => reply.headers.get('idempotent-replayed') === 'true';
const secondsOf = (time: string | null): number | null => (time === null ? null : Date.parse(time) / 1000);

it('creates one task and freezes once when identical submits race on one Idempotency-Key', async () => {
  const { live } = await setUp();
  const accounts = [
    await newAccount(live, { keys: [{}, {}] }),
    await newAccount(live, { keys: [{}, {}] }),
    await newAccount(live, { keys: [{}, {}] }),
  ];
  // Exactly one task's worth of points, and a key with room for one task: every replay must still be answered
  // once the points are frozen and the slot is taken.
  const poor = await newAccount(live, { points: '40.000', keys: [{ concurrency: 1 }, {}] });
  const all = [...accounts, poor];
  const random = seeded(SEED);

  // The same two key strings in every account: the slot is per account, so each account gets its own tasks.
  const requests = random.shuffle(
    all.flatMap((account) =>
      ['race-1', 'race-2'].flatMap((idempotencyKey) =>
        Array.from({ length: account === poor && idempotencyKey === 'race-2' ? 0 : 14 }, (_, i) => ({
          account,
          idempotencyKey,
          key: account.keys[i % 2] as string,
        })),
      ),
    ),
  );
  const replies = await Promise.all(
    requests.map((r) =>
      submit(live.as(r.key), note({ note: `https://notes.example.com/n/${r.idempotencyKey}` }), { 'Idempotency-Key': r.idempotencyKey }),
    ),
  );

  const ids = new Set<string>();
  for (const account of all) {
    for (const idempotencyKey of ['race-1', 'race-2']) {
      const mine = replies.filter((_, i) => requests[i]?.account === account && requests[i]?.idempotencyKey === idempotencyKey);
      if (mine.length === 0) continue;
      const tasks = mine.map((reply) => ok<Task>(reply));
      // One task, answered to every request; exactly one answer is the original, the rest are replays.
      expect(new Set(tasks.map((task) => task.id)).size).toBe(1);
      expect(mine.filter((reply) => !replayed(reply))).toHaveLength(1);
      for (const task of tasks) expect(task).toEqual(tasks[0]);
      ids.add((tasks[0] as Task).id);
    }
  }
  expect(ids.size).toBe(3 * 2 + 1);

  for (const account of all) {
    const { tasks } = await checkLedger(live, account);
    expect(tasks).toHaveLength(account === poor ? 1 : 2);
  }
  // The poor account's points are all frozen: a new key string is refused, a replay is still answered.
  const refused = await submit(live.as(poor.keys[0] as string), note(), { 'Idempotency-Key': 'race-3' });
  expect([refused.status, codeOf(refused)]).toEqual([402, 'insufficient_points']);
  expect(replayed(await submit(live.as(poor.keys[1] as string), note({ note: 'https://notes.example.com/n/race-1' }), { 'Idempotency-Key': 'race-1' }))).toBe(true);
});

it('creates one task when one Idempotency-Key races with different parameters; the others get 409', async () => {
  const { live } = await setUp();
  const account = await newAccount(live, { keys: [{}, {}, {}] });
  const random = seeded(SEED + 1);
  // Five parameter sets, one of them another model; two spellings normalize to the same input (a field that does
  // not apply to the mode is dropped, a numeric string is a number), so they are "the same parameters".
  const variants: { group: number; body: unknown }[] = [
    { group: 0, body: note({ note: 'https://notes.example.com/n/a' }) },
    { group: 0, body: note({ note: 'https://notes.example.com/n/a', sort: 'hot' }) },
    { group: 1, body: note({ note: 'https://notes.example.com/n/b' }) },
    { group: 2, body: { model: 'social-notes-data', input: { mode: 'search', keyword: 'tea', page: 2, agree: true } } },
    { group: 2, body: { model: 'social-notes-data', params: { mode: 'search', keyword: 'tea', page: '2', agree: true } } },
    { group: 3, body: { model: 'social-notes-data', input: { mode: 'profile', user: 'u-1', agree: true } } },
    { group: 4, body: { model: 'video-gen-2.0-fast', input: { prompt: 'tea', duration: 4, resolution: '480p' } } },
  ];
  const requests = random.shuffle(Array.from({ length: 35 }, (_, i) => ({ ...(variants[i % variants.length] as (typeof variants)[number]), key: account.keys[i % 3] as string })));
  const replies = await Promise.all(requests.map((r) => submit(live.as(r.key), r.body, { 'Idempotency-Key': 'same-key' })));

  const accepted = replies.flatMap((reply, i) => (reply.status === 200 ? [{ reply, group: requests[i]?.group }] : []));
  expect(accepted.length).toBeGreaterThan(0);
  const winner = accepted[0]?.group;
  // Every request with the first task's parameters is answered that task; every other one is a conflict.
  requests.forEach((request, i) => {
    const reply = replies[i] as Reply;
    if (request.group === winner) expect(reply.status).toBe(200);
    else expect([reply.status, codeOf(reply)]).toEqual([409, 'idempotency_conflict']);
  });
  expect(new Set(accepted.map(({ reply }) => (reply.body as Task).id)).size).toBe(1);
  expect(accepted.filter(({ reply }) => !replayed(reply))).toHaveLength(1);
  expect(accepted).toHaveLength(requests.filter((r) => r.group === winner).length);

  const { tasks, ledger } = await checkLedger(live, account);
  expect(tasks).toHaveLength(1);
  expect(ledger.filter((e) => e.kind === 'freeze')).toHaveLength(1);
});

/** Steps the race throws at a task, each answered 200 (it changed the task) or 409 (too late). */
const ACTIONS = ['cancel', 'admin-cancel', 'complete', 'fail', 'step'] as const;
type Action = (typeof ACTIONS)[number];

it('ends every task in exactly one terminal state when cancels race completions, failures and the clock', async () => {
  const random = seeded(SEED + 2);
  // A receiver that now and then takes a few milliseconds: callbacks in flight hold the clock's drain open while
  // cancels and control steps land.
  const { live, receiver } = await setUp((n, res) => void setTimeout(() => res.writeHead(200).end('ok'), n % 4));
  const accounts = [
    await newAccount(live, { webhookUrl: receiver.url, keys: [{}, {}] }),
    await newAccount(live, { webhookUrl: receiver.url, keys: [{}, {}] }),
    await newAccount(live, { webhookUrl: receiver.url, keys: [{}, {}] }),
  ];
  const scenarios = ['default', 'cancelable', 'instant', 'slow', 'generation_failed', 'service_unavailable', 'timeout', 'no_result'];

  // The tasks are submitted in parallel too, each on a seeded scenario.
  const plan = Array.from({ length: 63 }, (_, i) => ({ account: accounts[i % 3] as NewAccount, scenario: random.pick(scenarios), n: i }));
  const submitted = await Promise.all(
    plan.map((p) =>
      submit(live.as(p.account.keys[p.n % 2] as string), note({ note: `https://notes.example.com/n/${p.n}` }), {
        'X-Emulator-Scenario': p.scenario,
      }),
    ),
  );
  const owned = submitted.map((reply, i) => ({ task: ok<Task>(reply), account: (plan[i] as (typeof plan)[number]).account }));

  // One to four steps per task (none for every ninth, left to the clock), in a seeded order, with clock
  // advances among them.
  type Step = { kind: 'action'; action: Action; task: (typeof owned)[number] } | { kind: 'clock'; seconds: number };
  const steps: Step[] = random.shuffle([
    ...owned.flatMap((entry, i) =>
      Array.from({ length: i % 9 === 0 ? 0 : 1 + random.int(4) }, (): Step => ({ kind: 'action', action: random.pick(ACTIONS), task: entry })),
    ),
    ...Array.from({ length: 12 }, (): Step => ({ kind: 'clock', seconds: random.int(6) })),
  ]);
  const run = (step: Step): Promise<Reply> => {
    if (step.kind === 'clock') return live.admin.post('/_emulator/clock/advance', { seconds: step.seconds });
    const { id } = step.task.task;
    switch (step.action) {
      case 'cancel':
        return live.as(step.task.account.keys[0] as string).post(`/v1/tasks/${id}/cancel`);
      case 'admin-cancel':
        return live.admin.post(`/_emulator/tasks/${id}/cancel`);
      case 'complete':
        return live.admin.post(`/_emulator/tasks/${id}/complete`, {});
      case 'fail':
        return live.admin.post(`/_emulator/tasks/${id}/fail`, { code: 'generation_failed' });
      case 'step':
        return live.admin.post(`/_emulator/tasks/${id}/advance`);
    }
  };
  const replies = await Promise.all(steps.map(run));

  // Each step either changed its task or was refused for arriving too late; nothing else.
  const endedBy = new Map<string, { action: Action; task: Task }[]>();
  steps.forEach((step, i) => {
    const reply = replies[i] as Reply;
    if (step.kind === 'clock') return void expect(reply.status).toBe(200);
    if (reply.status !== 200) {
      const refusal = step.action === 'cancel' || step.action === 'admin-cancel' ? 'task_not_cancelable' : 'task_finished';
      return void expect([reply.status, codeOf(reply)]).toEqual([409, refusal]);
    }
    const task = reply.body as Task;
    const expected = { cancel: 'canceled', 'admin-cancel': 'canceled', complete: 'succeeded', fail: 'failed' } as const;
    if (step.action !== 'step') expect(task.status).toBe(expected[step.action]);
    if (TERMINAL.has(task.status)) endedBy.set(task.id, [...(endedBy.get(task.id) ?? []), { action: step.action, task }]);
  });

  // Past the longest life (10 minutes for notes) everything has ended, and every callback has been sent.
  await advance(live, 700);
  let ended = 0;
  for (const account of accounts) {
    const { tasks } = await checkLedger(live, account);
    for (const task of tasks) {
      expect(TERMINAL.has(task.status), `task ${task.id} is ${task.status}`).toBe(true);
      // At most one step ended it, and the task stayed exactly as that step answered.
      const enders = endedBy.get(task.id) ?? [];
      expect(enders.length, `task ${task.id} ended by ${enders.map((e) => e.action).join(', ')}`).toBeLessThanOrEqual(1);
      if (enders[0]) expect(task).toEqual(enders[0].task);
      else expect(task.status).not.toBe('canceled'); // only a cancel cancels
      if (enders.length > 0) ended += 1;
    }
    await checkCallbacks(live, account, receiver.received, tasks);
  }
  // Not vacuous: steps ended tasks, at least every long-lived one that was sent a completion or a failure (the
  // clock cannot end those within a minute), and the clock ended the untouched ones.
  const LONG = new Set(['cancelable', 'slow', 'timeout']);
  const surelyEnded = owned.filter(({ task }, i) =>
    LONG.has(plan[i]?.scenario as string) &&
    steps.some((step) => step.kind === 'action' && step.task.task.id === task.id && (step.action === 'complete' || step.action === 'fail')),
  ).length;
  expect(surelyEnded).toBeGreaterThan(0);
  expect(ended).toBeGreaterThanOrEqual(surelyEnded);
  expect(ended).toBeLessThan(owned.length);
  expect(idsWithTwoPayloads(receiver.received)).toEqual([]);
  expect(new Set(receiver.received.map((r) => String(r.headers['webhook-id']))).size).toBe(owned.length);

  // Every ended task gave its concurrency slot back exactly once: a cap of one admits one task, then refuses.
  for (const account of accounts) {
    const key = account.keys[1] as string;
    ok(await live.admin.patch(`/_emulator/keys/${key}`, { concurrency: 1 }));
    ok(await submit(live.as(key), note()));
    const refused = await submit(live.as(key), note());
    expect([refused.status, codeOf(refused)]).toEqual([429, 'concurrency_limited']);
  }
});

/** How a scenario moves a notes task: queue and processing seconds, and where it fails (if it does). */
interface Plan {
  queue: number;
  processing: number;
  fails: 'queued' | 'processing' | null;
}

/** Where the clock alone brings a task submitted at `created` by `now` (seconds), as its plan says. */
function expectedAt(plan: Plan, created: number, now: number): Pick<Task, 'status'> & { started: number | null; finished: number | null } {
  const leave = created + plan.queue;
  if (leave > now) return { status: 'queued', started: null, finished: null };
  if (plan.fails === 'queued') return { status: 'failed', started: null, finished: leave };
  const finish = leave + plan.processing;
  if (finish > now) return { status: 'processing', started: leave, finished: null };
  return { status: plan.fails ? 'failed' : 'succeeded', started: leave, finished: finish };
}

it('moves the clock by every advance and runs every transition at its time when advances race submits', async () => {
  const random = seeded(SEED + 3);
  const { live, receiver } = await setUp((n, res) => void setTimeout(() => res.writeHead(200).end('ok'), n % 3));
  const accounts = [
    await newAccount(live, { webhookUrl: receiver.url, keys: [{}, {}] }),
    await newAccount(live, { webhookUrl: receiver.url, keys: [{}, {}] }),
  ];
  const scenarios = ok<{ data: WireScenario[] }>(await live.admin.get('/_emulator/scenarios')).data;
  const planOf = (name: string): Plan => {
    const scenario = scenarios.find((s) => s.name === name);
    if (!scenario) throw new Error(`no scenario ${name}`);
    const times = scenario.per_model?.['social-notes-data'] ?? {};
    return {
      queue: times.queue_seconds ?? scenario.queue_seconds,
      processing: times.processing_seconds ?? scenario.processing_seconds,
      fails: scenario.failure?.during ?? null,
    };
  };
  const names = ['default', 'instant', 'generation_failed', 'service_unavailable', 'no_result'];

  // Callbacks already due when the race starts: the first advances wait on the receiver while the rest land.
  const warmUp = await Promise.all(
    Array.from({ length: 16 }, (_, i) => submit(live.as(accounts[i % 2]?.keys[0] as string), note(), { 'X-Emulator-Scenario': 'instant' })),
  );
  warmUp.forEach((reply) => ok(reply));
  const start = await clockNow(live);

  type Op = { kind: 'clock'; seconds: number } | { kind: 'submit'; account: NewAccount; key: string; scenario: string };
  const ops: Op[] = random.shuffle([
    ...Array.from({ length: 14 }, (): Op => ({ kind: 'clock', seconds: 1 + random.int(4) })),
    ...Array.from({ length: 70 }, (_, i): Op => {
      const account = accounts[i % 2] as NewAccount;
      return { kind: 'submit', account, key: account.keys[random.int(2)] as string, scenario: random.pick(names) };
    }),
  ]);
  const replies = await Promise.all(
    ops.map((op) =>
      op.kind === 'clock'
        ? live.admin.post('/_emulator/clock/advance', { seconds: op.seconds })
        : submit(live.as(op.key), note(), { 'X-Emulator-Scenario': op.scenario }),
    ),
  );
  // Whatever was submitted last and is already due runs now, without moving the clock.
  await advance(live, 0);

  // Every advance moved the clock by its own seconds: the answers, in order, step by exactly those amounts.
  const advances = ops.flatMap((op, i) => (op.kind === 'clock' ? [{ seconds: op.seconds, now: Date.parse(ok<{ now: string }>(replies[i] as Reply).now) }] : []));
  const total = advances.reduce((s, a) => s + a.seconds, 0);
  const now = await clockNow(live);
  expect((now - start) / 1000, 'seconds moved by all advances').toBe(total);
  const answered = advances.map((a) => (a.now - start) / 1000).sort((a, b) => a - b);
  const steps = answered.map((t, i) => t - (i === 0 ? 0 : (answered[i - 1] as number)));
  expect(steps.sort((a, b) => a - b)).toEqual(advances.map((a) => a.seconds).sort((a, b) => a - b));

  // Every task stands exactly where its plan puts it at this time, with its transitions at their own times.
  const scenarioOf = new Map<string, string>();
  ops.forEach((op, i) => {
    if (op.kind === 'submit') scenarioOf.set(ok<Task>(replies[i] as Reply).id, op.scenario);
  });
  const seen = new Set<string>();
  for (const account of accounts) {
    for (const task of await tasksOf(live, account.id)) {
      const created = secondsOf(task.created_at) as number;
      expect(created).toBeGreaterThanOrEqual(start / 1000);
      expect(created).toBeLessThanOrEqual(now / 1000);
      const scenario = scenarioOf.get(task.id) ?? 'instant';
      seen.add(task.status);
      const expected = expectedAt(planOf(scenario), created, now / 1000);
      expect({ status: task.status, started: secondsOf(task.started_at), finished: secondsOf(task.finished_at) }, `task ${task.id} on ${scenario}`).toEqual(expected);
    }
  }
  // Not vacuous: the race left tasks in more than one state (the warm-up tasks succeeded; the others either
  // ended on the way or were still waiting).
  expect(seen.size).toBeGreaterThanOrEqual(2);

  await advance(live, 700);
  for (const account of accounts) {
    const { tasks } = await checkLedger(live, account);
    expect(tasks.every((task) => TERMINAL.has(task.status))).toBe(true);
    await checkCallbacks(live, account, receiver.received, tasks);
  }
  expect(idsWithTwoPayloads(receiver.received)).toEqual([]);
});

it('repeats a callback only for a retry or a resend when deliveries, resends and the clock race', async () => {
  const random = seeded(SEED + 4);
  // How the receiver treats the first copy of a message, by its task's metadata: `no` accepts it; `yes` answers
  // 500 (the retry a minute later, or a resend before it, delivers it); `race` holds it until a resend of the same
  // message has been delivered, then answers 500, so the automatic attempt fails after the message was delivered.
  const seen = new Set<string>();
  const resent = new Map<string, number>();
  const held: Promise<unknown>[] = [];
  const current: { live?: Live; receiver?: Receiver } = {};
  const resend = (id: string): Promise<unknown> =>
    (current.live as Live).admin.post(`/_emulator/webhooks/deliveries/${id}/resend`).then((reply) => {
      ok(reply);
      resent.set(id, (resent.get(id) ?? 0) + 1);
    });
  const answer: Answer = (n, res) => {
    const r = current.receiver?.received[n] as Received;
    const id = String(r.headers['webhook-id']);
    const first = !seen.has(id);
    seen.add(id);
    const mode = /"fail_first":"(yes|race|no)"/.exec(r.raw.toString('utf8'))?.[1];
    if (first && mode === 'race') return void held.push(resend(id).finally(() => res.writeHead(500).end('too late')));
    const failing = first && mode === 'yes';
    setTimeout(() => res.writeHead(failing ? 500 : 200).end(failing ? 'not yet' : 'ok'), n % 3);
  };
  const { live, receiver } = await setUp(answer);
  Object.assign(current, { live, receiver });
  const accounts = [
    await newAccount(live, { webhookUrl: receiver.url, keys: [{}] }),
    await newAccount(live, { webhookUrl: receiver.url, keys: [{}] }),
  ];

  // Drawn before anything is sent, including which messages are resent and when. Three are fixed: the first
  // task's message fails once and is resent before its retry falls due; the second's races a resend; the third's
  // fails once and is never resent, so it is retried.
  const bodies = Array.from({ length: 40 }, (_, i) => {
    const failFirst = i < 3 ? (['yes', 'race', 'yes'] as const)[i] : random.pick(['no', 'no', 'yes', 'race'] as const);
    return {
      account: accounts[i % 2] as NewAccount,
      scenario: i === 0 ? 'instant' : random.pick(['instant', 'default', 'no_result']),
      failFirst,
      resendEarly: i === 0 || (i > 2 && failFirst === 'yes' && random.int(2) === 0),
      resendLater: i > 2 && random.int(2) === 0,
    };
  });
  const bodyOf = (message: Delivery): (typeof bodies)[number] =>
    bodies[Number((JSON.parse(message.body) as { data: Task }).data.metadata['n'])] as (typeof bodies)[number];
  const load = [
    ...bodies.map((b, i) =>
      submit(
        live.as(b.account.keys[0] as string),
        { ...note({ note: `https://notes.example.com/n/${i}` }), metadata: { n: String(i), fail_first: b.failFirst } },
        { 'X-Emulator-Scenario': b.scenario },
      ),
    ),
    ...Array.from({ length: 10 }, () => live.admin.post('/_emulator/clock/advance', { seconds: random.int(5) })),
  ];
  (await Promise.all(load)).forEach((reply) => ok(reply));
  await advance(live, 0);

  // With the clock still, resends of failed messages whose retry is not yet due: that retry must not be sent.
  const now = await clockNow(live);
  const pending = (await Promise.all(accounts.map((a) => deliveriesOf(live, a.id)))).flat();
  const early = pending.filter((m) => bodyOf(m).resendEarly && m.status === 'pending' && Date.parse(m.next_attempt_at as string) > now);
  await Promise.all(early.map((m) => resend(m.id)));
  await advance(live, 30);

  // Resends of about half the messages, racing the retries the next minutes bring.
  const messages = (await Promise.all(accounts.map((a) => deliveriesOf(live, a.id)))).flat();
  expect(messages).toHaveLength(bodies.length);
  const later = messages.filter((m) => bodyOf(m).resendLater);
  await Promise.all(
    random.shuffle([
      ...later.map((m) => () => resend(m.id)),
      ...Array.from({ length: 8 }, () => () => live.admin.post('/_emulator/clock/advance', { seconds: 10 + random.int(30) }).then(ok)),
    ]).map((op) => op()),
  );
  // Every retry there is (one per failed first copy) has fallen due by now.
  await advance(live, 3600);
  await Promise.all(held);

  const counts = { retried: 0, raced: 0, resentFirst: early.length };
  for (const account of accounts) {
    const { tasks } = await checkLedger(live, account);
    expect(tasks.every((task) => TERMINAL.has(task.status))).toBe(true);
    const byTask = await checkCallbacks(live, account, receiver.received, tasks);
    for (const task of tasks) {
      const message = byTask.get(task.id) as Delivery;
      const automatic = message.attempts.filter((a) => a.kind === 'automatic');
      const mode = task.metadata['fail_first'];
      // Every resend made is one attempt of its own; the automatic ones are the first, then a retry only if the
      // first failed and nothing delivered the message before the retry fell due.
      expect(message.attempts.filter((a) => a.kind === 'resend').length, `message ${message.id}`).toBe(resent.get(message.id) ?? 0);
      const expected =
        mode === 'no' || mode === 'race'
          ? [[mode === 'no']]
          : early.some((m) => m.id === message.id)
            ? [[false]]
            : resent.has(message.id)
              ? [[false], [false, true]]
              : [[false, true]];
      expect(expected, `message ${message.id} (${mode}): automatic attempts ${JSON.stringify(automatic)}`).toContainEqual(automatic.map((a) => a.ok));
      if (mode === 'yes' && automatic.length === 2) counts.retried += 1;
      if (mode === 'race') counts.raced += 1;
    }
  }
  expect(idsWithTwoPayloads(receiver.received)).toEqual([]);
  // Not vacuous: messages were retried, resends delivered others before their retry or while their first
  // attempt was failing.
  expect(counts.retried).toBeGreaterThan(0);
  expect(counts.raced).toBeGreaterThan(0);
  expect(counts.resentFirst).toBeGreaterThan(0);
});

it('never admits more than a key or account concurrency cap when submits race', async () => {
  const { live } = await setUp();
  const keyCapped = await newAccount(live, { keys: [{ concurrency: 4 }] });
  const accountCapped = await newAccount(live, { concurrency: 5, keys: [{ concurrency: 2 }, {}, {}] });

  const replies = await Promise.all([
    ...Array.from({ length: 30 }, () => submit(live.as(keyCapped.keys[0] as string), note())),
    ...Array.from({ length: 30 }, (_, i) => submit(live.as(accountCapped.keys[i % 3] as string), note())),
  ]);
  const key = replies.slice(0, 30);
  const account = replies.slice(30);
  for (const reply of replies) if (reply.status !== 200) expect([reply.status, codeOf(reply)]).toEqual([429, 'concurrency_limited']);
  expect(key.filter((r) => r.status === 200)).toHaveLength(4);
  expect(account.filter((r) => r.status === 200)).toHaveLength(5);
  expect(account.filter((r, i) => r.status === 200 && i % 3 === 0).length).toBeLessThanOrEqual(2);
  expect((await checkLedger(live, keyCapped)).tasks).toHaveLength(4);
  expect((await checkLedger(live, accountCapped)).tasks).toHaveLength(5);
});

it('lets exactly a key\'s per-minute requests through when they race', async () => {
  const { live } = await setUp();
  const account = await newAccount(live, { keys: [{ rpm: 10 }] });
  const replies = await Promise.all(Array.from({ length: 30 }, () => live.as(account.keys[0] as string).get('/v1/tasks')));
  expect(replies.filter((r) => r.status === 200)).toHaveLength(10);
  for (const reply of replies.filter((r) => r.status !== 200)) {
    expect([reply.status, codeOf(reply)]).toEqual([429, 'rate_limited']);
    expect(Number(reply.headers.get('retry-after'))).toBeGreaterThan(0);
  }
});

it('never lets a key freeze past its quota while submits, cancels, failures and the clock race', async () => {
  const random = seeded(SEED + 6);
  const { live } = await setUp();
  const QUOTA = '200.000';
  const account = await newAccount(live, { keys: [{ quota: { points: QUOTA, period: 'daily' } }] });
  const key = account.keys[0] as string;

  // The whole mix is drawn before anything is sent, so it is the same whatever the interleaving. Every fourth
  // task succeeds at once and is never canceled: twelve of them need 480 points, so the quota must refuse some.
  const waves = Array.from({ length: 3 }, (_, wave) =>
    random.shuffle([
      ...Array.from({ length: 16 }, (_, i) => {
        const keeps = (wave * 16 + i) % 4 === 0;
        const scenario = keeps ? 'instant' : random.pick(['instant', 'default', 'no_result', 'cancelable']);
        return { kind: 'submit' as const, scenario, cancel: !keeps && random.int(3) === 0 };
      }),
      ...Array.from({ length: 4 }, () => ({ kind: 'clock' as const, seconds: random.int(8) })),
    ]),
  );
  const accepted: Task[] = [];
  const refused: Reply[] = [];
  for (const wave of waves) {
    await Promise.all(
      wave.map(async (op) => {
        if (op.kind === 'clock') return void ok(await live.admin.post('/_emulator/clock/advance', { seconds: op.seconds }));
        const reply = await submit(live.as(key), note(), { 'X-Emulator-Scenario': op.scenario });
        if (reply.status !== 200) return void refused.push(reply);
        accepted.push(reply.body as Task);
        // Canceled at once, giving the points back to the quota while other submits land.
        if (op.cancel) {
          const cancel = await live.as(key).post(`/v1/tasks/${(reply.body as Task).id}/cancel`);
          if (cancel.status !== 200) expect([cancel.status, codeOf(cancel)]).toEqual([409, 'task_not_cancelable']);
        }
      }),
    );
  }
  for (const reply of refused) expect([reply.status, codeOf(reply)]).toEqual([402, 'key_quota_exceeded']);
  await advance(live, 700);
  const { tasks, ledger } = await checkLedger(live, account);

  // Replay the ledger: a freeze takes from the quota, a refund gives back; what is charged stays used.
  let used = new Big(0);
  for (const e of [...ledger].sort((a, b) => a.id - b.id)) {
    if (e.kind === 'freeze') used = used.plus(e.points);
    if (e.kind === 'refund') used = used.minus(e.points);
    expect(used.lte(QUOTA), `quota overspent at ledger entry ${e.id}: ${used.toFixed(3)}`).toBe(true);
  }
  const view = ok<{ quota: { used: string } }>(await live.admin.get(`/_emulator/keys/${key}`));
  expect(view.quota.used).toBe(used.toFixed(3));
  expect(tasks).toHaveLength(accepted.length);
  // Not vacuous: the quota was filled (the first five always fit) and refused work.
  expect(accepted.length).toBeGreaterThanOrEqual(5);
  expect(refused.length).toBeGreaterThan(0);
});

it('keeps running work within the caps at every moment while submits, text calls, cancels and the clock race', async () => {
  const random = seeded(SEED + 5);
  const { live } = await setUp();
  const ACCOUNT_CAP = 8;
  const caps = [2, 3, null] as const;
  const account = await newAccount(live, { concurrency: ACCOUNT_CAP, keys: caps.map((concurrency) => ({ concurrency })) });
  const keyCaps = new Map(account.keys.map((key, i) => [key, caps[i] ?? null]));
  // Text calls that hold their slot for real time (the first token after 150 ms) while tasks come and go.
  const loaded = await live.admin.post('/_emulator/scenarios', {
    scenarios: [{ name: 'text-hold', outcome: 'succeeded', text: { first_token_ms: 150, chunk_interval_ms: 2 } }],
  });
  expect(loaded.status).toBe(201);

  // The whole mix is drawn before anything is sent. Every fourth task processes for 5 minutes and is never
  // canceled, longer than all the advances together (at most 162 s): eighteen of them cannot all fit under the
  // account's cap of eight, so some work must be refused.
  type Op =
    | { kind: 'submit'; key: string; scenario: string; cancel: boolean }
    | { kind: 'text'; key: string; stream: boolean }
    | { kind: 'clock'; seconds: number };
  const waves = Array.from({ length: 3 }, (_, wave) =>
    random.shuffle([
      ...Array.from({ length: 24 }, (_, i): Op => {
        const holds = (wave * 24 + i) % 4 === 0;
        const scenario = holds ? 'cancelable' : random.pick(['instant', 'default', 'cancelable']);
        return { kind: 'submit', key: random.pick(account.keys), scenario, cancel: !holds && random.int(4) === 0 };
      }),
      ...Array.from({ length: 6 }, (): Op => ({ kind: 'text', key: random.pick(account.keys), stream: random.int(2) === 0 })),
      ...Array.from({ length: 6 }, (): Op => ({ kind: 'clock', seconds: random.int(10) })),
    ]),
  );

  // Who started each piece of work: a task by its id, a text call by its request id.
  const startedBy = new Map<string, string>();
  const refused: Reply[] = [];
  const run = async (op: Op): Promise<void> => {
    if (op.kind === 'clock') return void ok(await live.admin.post('/_emulator/clock/advance', { seconds: op.seconds }));
    if (op.kind === 'text') {
      const reply = await live.as(op.key).post(
        '/v1/chat/completions',
        { model: 'svc-text-lite', messages: [{ role: 'user', content: 'Hello' }], stream: op.stream },
        { 'X-Emulator-Scenario': 'text-hold' },
      );
      if (reply.status !== 200) return void refused.push(reply);
      return void startedBy.set(reply.headers.get('x-request-id') as string, op.key);
    }
    const reply = await submit(live.as(op.key), note(), { 'X-Emulator-Scenario': op.scenario });
    if (reply.status !== 200) return void refused.push(reply);
    startedBy.set((reply.body as Task).id, op.key);
    // Canceled at once, racing everything else.
    if (op.cancel) {
      const cancel = await live.as(op.key).post(`/v1/tasks/${(reply.body as Task).id}/cancel`);
      if (cancel.status !== 200) expect([cancel.status, codeOf(cancel)]).toEqual([409, 'task_not_cancelable']);
    }
  };
  for (const wave of waves) await Promise.all(wave.map(run));
  for (const reply of refused) expect([reply.status, codeOf(reply)]).toEqual([429, 'concurrency_limited']);
  await advance(live, 700);
  const { ledger } = await checkLedger(live, account);

  // Replay the ledger in its own order: a freeze starts a piece of work, its first charge or refund ends it.
  const running = new Map<string, number>();
  let total = 0;
  const ended = new Set<string>();
  const bump = (key: string, by: number): void => void running.set(key, (running.get(key) ?? 0) + by);
  for (const e of [...ledger].sort((a: LedgerEntry, b: LedgerEntry) => a.id - b.id)) {
    const work = e.task_id ?? e.call_id;
    if (work === undefined || work === null) continue;
    const key = startedBy.get(work);
    expect(key, `ledger entry ${e.id} for work nobody started`).toBeDefined();
    if (key === undefined) continue;
    if (e.kind === 'freeze') {
      bump(key, 1);
      total += 1;
      const cap = keyCaps.get(key);
      if (cap !== null && cap !== undefined) expect(running.get(key), `key ${key} over its cap at ledger entry ${e.id}`).toBeLessThanOrEqual(cap);
      expect(total, `account over its cap at ledger entry ${e.id}`).toBeLessThanOrEqual(ACCOUNT_CAP);
    } else if (!ended.has(work)) {
      ended.add(work);
      bump(key, -1);
      total -= 1;
    }
  }
  expect(total).toBe(0);
  // Not vacuous: the caps refused work.
  expect(refused.length).toBeGreaterThan(0);
});
