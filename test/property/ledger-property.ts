import Big from 'big.js';
import fc from 'fast-check';
import request from 'supertest';
import { expect } from 'vitest';
import { ADMIN_TOKEN, newAccount, startEmulator } from '../support/harness.ts';
import { FAILURE_CODES } from '../support/wire-task.ts';
import type { FailureCode, WireScenario, WireTask } from '../support/wire-task.ts';
import type { TestEmulator } from '../support/harness.ts';

/**
 * Points are never created or lost: random submissions, cancels, control steps and clock advances on a few
 * accounts (some too poor to pay), with the ledger, the balances and every task's points checked in exact
 * decimals after every command. Each command's answer is predicted from what was observed before it (402 from
 * the balance, 409 from the task's state, the next state from its scenario's plan), and a clock advance must
 * move every unfinished task exactly as its plan and the model's maximum processing time say.
 * @see reference "States and transitions", the three model sections and their prices, "Conventions": Points
 */

// ---------------------------------------------------------------------------------------------------------------
// Inputs: valid by the parameter tables of the three models.

type FailCode = FailureCode;

/** Every scenario the package ships (scenarios/*.yaml); undefined sends no header (the default scenario). */
const SCENARIOS = [
  'default',
  'instant',
  'slow',
  'timeout',
  'timeout-in-queue',
  'cancelable',
  'rejected',
  ...FAILURE_CODES.filter((code) => code !== 'timeout'),
] as const;


/** What a task of a model does on a scenario: when it leaves the queue, how long it processes, how it ends. */
interface Plan {
  queueMs: number;
  /** null: never finishes on its own; the maximum processing time fails it. */
  processingMs: number | null;
  failure: { code: FailCode; during: 'queued' | 'processing' } | null;
  cancelableWhileProcessing: boolean;
}

function planOf(scenario: WireScenario<FailCode>, model: string): Plan {
  const times = scenario.per_model?.[model] ?? {};
  return {
    queueMs: (times.queue_seconds ?? scenario.queue_seconds) * 1000,
    processingMs: scenario.outcome === 'timeout' ? null : (times.processing_seconds ?? scenario.processing_seconds) * 1000,
    failure: scenario.failure ?? null,
    cancelableWhileProcessing: scenario.cancelable_while_processing,
  };
}

const MAX_PROCESSING_SECONDS: Record<string, number> = {
  'social-notes-data': 600,
  'video-gen-2.0-fast': 3600,
  'avatar-photo': 3600,
};
const VIDEO_PER_SECOND: Record<string, string> = { '480p': '97.2', '720p': '237.6', '1080p': '587.5' };
const AVATAR_PER_SECOND: Record<string, string> = { fast: '4', standard: '6', max: '8' };

type Input = Record<string, unknown>;
interface Body {
  model: 'social-notes-data' | 'video-gen-2.0-fast' | 'avatar-photo';
  input: Input;
}

/** Printable text within [min, max] characters, with the maximum itself now and then. */
const text = (min: number, max: number): fc.Arbitrary<string> =>
  fc.oneof(
    { arbitrary: fc.string({ minLength: min, maxLength: Math.min(max, 24) }), weight: 4 },
    { arbitrary: fc.string({ minLength: max, maxLength: max }), weight: 1 },
  );
/** Text the document asks to hold more than spaces (pattern \S: a note link, a user, a search keyword). */
const words = (min: number, max: number): fc.Arbitrary<string> => text(min, max).filter((value) => /\S/.test(value));
/** An integer in range, sometimes sent as a numeric string (the service converts it). */
const integer = (min: number, max: number): fc.Arbitrary<number | string> =>
  fc.oneof({ arbitrary: fc.integer({ min, max }), weight: 3 }, { arbitrary: fc.integer({ min, max }).map(String), weight: 1 });
const address = (extensions: string[]): fc.Arbitrary<string> =>
  fc
    .tuple(fc.stringMatching(/^[a-z0-9]{1,8}$/), fc.constantFrom(...extensions))
    .map(([name, ext]) => `https://cdn.example.com/${name}.${ext}`);
const image = address(['jpg', 'png', 'webp']);
const video = address(['mp4', 'mov']);
const audio = address(['mp3', 'wav', 'm4a']);
const portrait = text(1, 128);

/** Leaves out the fields an arbitrary chose not to send. */
const defined = (input: Record<string, unknown>): Input =>
  Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined));
const maybe = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> => fc.option(arb, { nil: undefined });

const notesInput: fc.Arbitrary<Input> = fc.oneof(
  fc.record({ mode: fc.constant('note'), note: words(1, 1000) }),
  fc.record({ mode: fc.constant('notes'), user: words(1, 1000), cursor: maybe(text(0, 500)) }),
  fc.record({ mode: fc.constant('profile'), user: words(1, 1000) }),
  fc.record({
    mode: fc.constant('search'),
    keyword: words(1, 50),
    sort: maybe(fc.constantFrom('general', 'hot', 'latest', 'comments', 'collects')),
    note_type: maybe(fc.constantFrom('all', 'video', 'image')),
    page: maybe(integer(1, 50)),
  }),
);

/** Reference images and portraits, together between `min` and 9. */
const references = (min: number): fc.Arbitrary<{ images?: string[]; portraits?: string[] }> =>
  fc
    .integer({ min, max: 9 })
    .chain((total) => fc.integer({ min: 0, max: total }).map((images) => [images, total - images] as const))
    .chain(([images, portraits]) =>
      fc.record({
        images: images === 0 ? fc.constant(undefined) : fc.array(image, { minLength: images, maxLength: images }),
        portraits: portraits === 0 ? fc.constant(undefined) : fc.array(portrait, { minLength: portraits, maxLength: portraits }),
      }),
    )
    .map(defined);

const videoInput: fc.Arbitrary<Input> = fc
  .tuple(
    fc.record({
      prompt: text(1, 2000),
      ratio: maybe(fc.constantFrom('16:9', '9:16', '1:1', '4:3', '3:4', '21:9', 'adaptive')),
      resolution: maybe(fc.constantFrom('480p', '720p', '1080p')),
      duration: maybe(integer(4, 15)),
      sound: maybe(fc.boolean()),
      seed: maybe(fc.integer({ min: 0, max: 2147483647 })),
    }),
    fc.oneof(
      fc.record({ mode: maybe(fc.constant('text')) }),
      fc.record({ mode: fc.constant('frames'), image, last_image: maybe(image) }),
      fc
        .tuple(references(1), fc.record({ mode: fc.constant('reference'), audio: maybe(audio) }))
        .map(([refs, rest]) => ({ ...rest, ...refs })),
      fc
        .tuple(
          references(0),
          fc.record({ mode: fc.constant('video'), videos: fc.array(video, { minLength: 1, maxLength: 3 }), audio: maybe(audio) }),
        )
        .map(([refs, rest]) => ({ ...rest, ...refs })),
    ),
  )
  .map(([common, mode]) => defined({ ...common, ...mode }));

const avatarInput: fc.Arbitrary<Input> = fc
  .tuple(
    fc.record({ image, prompt: maybe(text(0, 500)), quality: maybe(fc.constantFrom('fast', 'standard', 'max')) }),
    fc.oneof(
      fc.record({ drive: maybe(fc.constant('audio')), audio }),
      fc.record({ drive: fc.constant('text'), content: text(2, 1000), voice_audio: audio }),
    ),
  )
  .map(([common, drive]) => defined({ ...common, ...drive }));

const body: fc.Arbitrary<Body> = fc.oneof(
  notesInput.map((input): Body => ({ model: 'social-notes-data', input: { ...input, agree: true } })),
  videoInput.map((input): Body => ({ model: 'video-gen-2.0-fast', input })),
  avatarInput.map((input): Body => ({ model: 'avatar-photo', input })),
);

/** Points frozen at submission, by the price tables. */
function expectedFreeze({ model, input }: Body): string {
  switch (model) {
    case 'social-notes-data':
      return '40.000';
    case 'video-gen-2.0-fast': {
      const perSecond = VIDEO_PER_SECOND[String(input['resolution'] ?? '720p')] as string;
      return new Big(perSecond).times(Number(input['duration'] ?? 5)).toFixed(3);
    }
    case 'avatar-photo':
      // One audio material (the speech audio, or the reference voice), estimated at 10 seconds.
      return new Big(AVATAR_PER_SECOND[String(input['quality'] ?? 'standard')] as string).times(10).toFixed(3);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Commands.

/** A task to act on, by index among those preferred (processing ones, unfinished ones), or among all if none. */
interface Target {
  task: number;
  prefer: 'processing' | 'unfinished' | 'any';
}

type Command =
  | { kind: 'submit'; account: number; scenario: string | undefined; body: Body }
  | ({ kind: 'cancel'; foreign: boolean } & Target)
  | ({ kind: 'control'; action: 'advance' | 'complete' } & Target)
  | ({ kind: 'fail'; code: FailCode } & Target)
  | { kind: 'clock'; seconds: number };

const target = {
  task: fc.nat({ max: 29 }),
  prefer: fc.oneof(
    { arbitrary: fc.constant('processing' as const), weight: 2 },
    { arbitrary: fc.constant('unfinished' as const), weight: 2 },
    { arbitrary: fc.constant('any' as const), weight: 1 },
  ),
};

const command: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('submit' as const),
      account: fc.nat({ max: 2 }),
      scenario: maybe(fc.constantFrom(...SCENARIOS)),
      body,
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('cancel' as const), foreign: fc.boolean(), ...target }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('control' as const), action: fc.constantFrom('advance' as const, 'complete' as const), ...target }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('fail' as const), code: fc.constantFrom(...FAILURE_CODES), ...target }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('clock' as const),
      // Often a little (to catch tasks between steps), sometimes past every deadline.
      seconds: fc.oneof(fc.integer({ min: 0, max: 120 }), fc.integer({ min: 0, max: 7200 })),
    }),
  },
);

/** Opening balances: mostly able to pay for a few tasks, some too poor for most (or any). */
const balances = fc.array(
  fc.oneof(
    { weight: 2, arbitrary: fc.constantFrom('5000.000', '20000.000', '100000.000') },
    { weight: 1, arbitrary: fc.constantFrom('0.000', '39.999', '40.000', '45.500', '400.000', '1188.000') },
  ),
  { minLength: 2, maxLength: 3 },
);

// ---------------------------------------------------------------------------------------------------------------
// What the emulator holds, read back after every command, and the invariants on it.

type Task = Omit<WireTask<Input>, 'metadata'>;
interface LedgerEntry {
  id: number;
  n: number;
  account_id: string;
  kind: 'fund' | 'freeze' | 'charge' | 'refund' | 'collect';
  points: string;
  task_id: string | null;
}
interface Account {
  id: string;
  key: string;
  opening: string;
}
interface Observed {
  available: Map<string, string>;
  /** This run's tasks, account by account, each account's oldest first, with their owner and scenario. */
  tasks: { task: Task; account_id: string; scenario: string }[];
}

const THREE_DECIMALS = /^\d+\.\d{3}$/;
const SIGNED_THREE_DECIMALS = /^-?\d+\.\d{3}$/;
const TERMINAL = new Set(['succeeded', 'failed', 'canceled']);
const sum = (values: string[]): Big => values.reduce((total, value) => total.plus(value), new Big(0));
const same = (actual: Big | string, expected: Big | string): void => expect(new Big(actual).toFixed(3)).toBe(new Big(expected).toFixed(3));

/**
 * Reads every account's balances, ledger and tasks. These reads repeat after every command, so they skip the
 * harness's document check (it costs more than the request); the same reads go through it once a run ends.
 */
async function observe(t: TestEmulator, accounts: Account[], nowMs: number, checked = false): Promise<Observed> {
  const read = async (path: string): Promise<Record<string, unknown>> => {
    const res = checked
      ? await t.admin.get(path)
      : await request(t.emulator.app).get(path).set('Authorization', `Bearer ${ADMIN_TOKEN}`);
    expect(res.status).toBe(200);
    return res.body as Record<string, unknown>;
  };
  // This run's tasks are the newest (it makes at most 30), so the newest 100 of the whole emulator hold them all.
  const [listed, ...reads] = await Promise.all([
    read('/_emulator/tasks?limit=100'),
    ...accounts.flatMap((account) => [read(`/_emulator/accounts/${account.id}`), read(`/_emulator/accounts/${account.id}/ledger`)]),
  ]);
  const all = (listed?.['data'] as Observed['tasks']).slice().reverse();
  const available = new Map<string, string>();
  const tasks: Observed['tasks'] = [];

  accounts.forEach((account, i) => {
    const balance = reads[2 * i] as Record<string, unknown>;
    const ledger = reads[2 * i + 1] as Record<string, unknown>;
    const { available: free, frozen, charged } = balance as { available: string; frozen: string; charged: string };
    expect(balance['id']).toBe(account.id);
    expect(free).toMatch(SIGNED_THREE_DECIMALS); // a settlement may collect beyond the balance
    expect(frozen).toMatch(THREE_DECIMALS);
    expect(charged).toMatch(THREE_DECIMALS);
    available.set(account.id, free);

    const own = all.filter((entry) => entry.account_id === account.id);
    for (const entry of own) checkTask(entry.task, nowMs);
    tasks.push(...own);

    const entries = ledger['data'] as LedgerEntry[];
    // Numbered 1, 2, 3, … within the account, in the order written, whatever the other accounts wrote between.
    expect(entries.map((e) => e.n)).toEqual(entries.map((_, k) => k + 1));
    expect(entries.map((e) => e.id)).toEqual(entries.map((e) => e.id).sort((a, b) => a - b));
    for (const entry of entries) {
      expect(entry.account_id).toBe(account.id);
      expect(entry.points).toMatch(THREE_DECIMALS);
      expect(new Big(entry.points).gt(0)).toBe(true);
      expect(entry.task_id === null).toBe(entry.kind === 'fund');
    }
    const of = (kind: LedgerEntry['kind'], taskId?: string): string[] =>
      entries.filter((e) => e.kind === kind && (taskId === undefined || e.task_id === taskId)).map((e) => e.points);

    // funded = available + frozen + charged, and funded is exactly what the account was opened with.
    const funded = sum(of('fund'));
    same(funded, account.opening);
    same(new Big(free).plus(frozen).plus(charged), funded);
    // Each balance is what its entries say (as the store check has it): frozen points are the freezes not yet
    // charged or refunded; charged is the charges plus what settlements collected beyond their freezes, which
    // came straight out of available.
    same(sum(of('fund')).minus(sum(of('freeze'))).plus(sum(of('refund'))).minus(sum(of('collect'))), free);
    same(sum(of('freeze')).minus(sum(of('charge'))).minus(sum(of('refund'))), frozen);
    same(sum(of('charge')).plus(sum(of('collect'))), charged);

    // Each task's points are its own ledger entries; only unfinished tasks hold frozen points. frozen is the one
    // freeze of the submission, released by the charge and the refund; a finished task has
    // charged − collected + refunded = frozen, collecting only beyond the freeze and refunding only short of it.
    const ids = new Set(own.map((entry) => entry.task.id));
    for (const entry of entries) if (entry.task_id !== null) expect(ids.has(entry.task_id)).toBe(true);
    for (const { task } of own) {
      const { frozen: taskFrozen, charged: taskCharged, refunded } = task.points;
      const collected = sum(of('collect', task.id));
      expect(of('freeze', task.id)).toEqual([taskFrozen]);
      same(sum(of('charge', task.id)).plus(collected), taskCharged);
      same(sum(of('refund', task.id)), refunded);
      same(sum(of('charge', task.id)).plus(sum(of('refund', task.id))), TERMINAL.has(task.status) ? taskFrozen : '0');
      if (TERMINAL.has(task.status)) same(new Big(taskCharged).minus(collected).plus(refunded), taskFrozen);
      const beyond = new Big(taskCharged).minus(taskFrozen);
      same(collected, beyond.gt(0) ? beyond : '0');
      expect(of('collect', task.id).length).toBeLessThanOrEqual(1);
    }
    same(sum(own.filter(({ task }) => !TERMINAL.has(task.status)).map(({ task }) => task.points.frozen)), frozen);
  });
  return { available, tasks };
}

function checkTask(task: Task, nowMs: number): void {
  const { frozen, charged, refunded } = task.points;
  for (const value of [frozen, charged, refunded]) expect(value).toMatch(THREE_DECIMALS);
  // The freeze is the price table's and stays so: a settlement beyond it is collected, not frozen.
  const estimate = expectedFreeze({ model: task.model as Body['model'], input: task.input });
  expect(frozen).toBe(estimate);
  switch (task.status) {
    case 'queued':
    case 'processing':
      expect([charged, refunded]).toEqual(['0.000', '0.000']);
      expect(task.started_at === null).toBe(task.status === 'queued');
      expect(task.finished_at).toBeNull();
      expect(task.output).toBeNull();
      expect(task.error).toBeNull();
      // Nothing outlives the model's maximum processing time.
      expect(nowMs - Date.parse(task.created_at)).toBeLessThan(MAX_PROCESSING_SECONDS[task.model] as number * 1000);
      break;
    case 'succeeded': {
      // Refunded only what the settlement did not need; anything beyond the freeze was collected (the ledger).
      const short = new Big(frozen).minus(charged);
      same(refunded, short.gt(0) ? short : '0');
      expect(new Big(charged).gt(0)).toBe(true);
      if (task.model === 'avatar-photo') {
        // The actual seconds reported, billed whole (rounded up) at the quality's per-second price.
        const perSecond = AVATAR_PER_SECOND[String(task.input['quality'])] as string;
        const duration = (task.output as { duration: number }).duration;
        same(charged, new Big(perSecond).times(Math.ceil(duration)));
        expect((task.output as { files: { duration: number }[] }).files[0]?.duration).toBe(duration);
      } else if (!Array.isArray(task.input['videos'])) {
        // A fixed price, or duration × per-second price: charged exactly as frozen.
        expect(task.points).toEqual({ frozen: estimate, charged: estimate, refunded: '0.000' });
      }
      expect(task.started_at).not.toBeNull();
      expect(task.finished_at).not.toBeNull();
      expect(task.output).not.toBeNull();
      expect(task.error).toBeNull();
      break;
    }
    case 'failed':
    case 'canceled':
      expect(charged).toBe('0.000');
      expect(refunded).toBe(frozen);
      expect(task.finished_at).not.toBeNull();
      expect(task.output).toBeNull();
      if (task.status === 'canceled') expect(task.error?.code).toBe('canceled');
      else expect(FAILURE_CODES).toContain(task.error?.code);
      break;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Where tasks must be after a command, given what was observed before it.

/** The parts of a task that its transitions set. */
interface Progress {
  status: Task['status'];
  started_ms: number | null;
  finished_ms: number | null;
  code: string | null;
}

const msOf = (time: string | null): number | null => (time === null ? null : Date.parse(time));
const progressOf = (task: Task): Progress => ({
  status: task.status,
  started_ms: msOf(task.started_at),
  finished_ms: msOf(task.finished_at),
  code: task.error?.code ?? null,
});

/**
 * Where the clock alone brings an unfinished task by `nowMs`: out of the queue after the plan's queue time (or
 * failed there), finished after its processing time, and failed with `timeout` at the model's maximum
 * processing time if still unfinished. Jobs due at the same moment run in the order they were scheduled: the
 * queue exit before the deadlines (all scheduled at submission), the deadlines before the finish (scheduled
 * when the task started).
 */
function byClock(task: Task, plan: Plan, nowMs: number): Progress {
  const created = Date.parse(task.created_at);
  const deadline = created + (MAX_PROCESSING_SECONDS[task.model] as number) * 1000;
  let started = msOf(task.started_at);
  const failed = (code: string, at: number): Progress => ({ status: 'failed', started_ms: started, finished_ms: at, code });
  if (task.status === 'queued') {
    const leave = created + plan.queueMs;
    if (leave > nowMs || leave > deadline) {
      return deadline <= nowMs ? failed('timeout', deadline) : progressOf(task);
    }
    if (plan.failure?.during === 'queued') return failed(plan.failure.code, leave);
    started = leave;
  }
  const finish = plan.processingMs === null || started === null ? Infinity : started + plan.processingMs;
  if (finish < deadline && finish <= nowMs) {
    return plan.failure ? failed(plan.failure.code, finish) : { status: 'succeeded', started_ms: started, finished_ms: finish, code: null };
  }
  if (deadline <= nowMs) return failed('timeout', deadline);
  return { status: 'processing', started_ms: started, finished_ms: null, code: null };
}

// ---------------------------------------------------------------------------------------------------------------
// Running one command, with the answer it must get given what was observed before it.

interface Ran {
  /** The clock after a clock advance. */
  nowMs?: number;
  /** The id of a task the command created. */
  created?: string;
  /** The task a cancel or control step answered with (it changed that task). */
  answered?: Task;
}

async function run(
  t: TestEmulator,
  accounts: Account[],
  plans: Map<string, WireScenario<FailCode>>,
  before: Observed,
  nowMs: number,
  cmd: Command,
): Promise<Ran> {
  if (cmd.kind === 'clock') {
    const res = await t.admin.post('/_emulator/clock/advance', { seconds: cmd.seconds });
    expect(res.status).toBe(200);
    expect(Date.parse(res.body.now as string)).toBe(nowMs + cmd.seconds * 1000);
    return { nowMs: nowMs + cmd.seconds * 1000 };
  }
  if (cmd.kind === 'submit') {
    const account = accounts[cmd.account % accounts.length] as Account;
    const headers: Record<string, string> = cmd.scenario === undefined ? {} : { 'X-Emulator-Scenario': cmd.scenario };
    const res = await t.as(account.key).post('/v1/tasks', cmd.body, headers);
    const freeze = expectedFreeze(cmd.body);
    if (cmd.scenario === 'rejected') {
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('content_rejected');
      return {};
    }
    if (new Big(before.available.get(account.id) as string).lt(freeze)) {
      expect(res.status).toBe(402);
      expect(res.body.error.code).toBe('insufficient_points');
      return {};
    }
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      model: cmd.body.model,
      status: 'queued',
      started_at: null,
      finished_at: null,
      points: { frozen: freeze, charged: '0.000', refunded: '0.000' },
      output: null,
      error: null,
    });
    expect(Date.parse(res.body.created_at as string)).toBe(nowMs);
    return { created: res.body.id as string };
  }

  const unfinished = before.tasks.filter((entry) => !TERMINAL.has(entry.task.status));
  const processing = unfinished.filter((entry) => entry.task.status === 'processing');
  const among = [
    ...(cmd.prefer === 'processing' ? [processing] : []),
    ...(cmd.prefer !== 'any' ? [unfinished] : []),
    before.tasks,
  ].find((candidates) => candidates.length > 0);
  if (among === undefined) return {};
  const { task, account_id, scenario } = among[cmd.task % among.length] as Observed['tasks'][number];
  const plan = planOf(plans.get(scenario) as WireScenario<FailCode>, task.model);
  const owner = accounts.findIndex((a) => a.id === account_id);
  const started = msOf(task.started_at);
  const failed = (code: string, startedMs = started): Progress => ({ status: 'failed', started_ms: startedMs, finished_ms: nowMs, code });

  if (cmd.kind === 'cancel') {
    const key = (accounts[cmd.foreign ? (owner + 1) % accounts.length : owner] as Account).key;
    const res = await t.as(key).post(`/v1/tasks/${task.id}/cancel`);
    if (cmd.foreign) {
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('not_found');
      return {};
    }
    if (task.status === 'queued' || (task.status === 'processing' && plan.cancelableWhileProcessing)) {
      expect(res.status).toBe(200);
      expect(progressOf(res.body as Task)).toEqual({ status: 'canceled', started_ms: started, finished_ms: nowMs, code: 'canceled' });
      return { answered: res.body as Task };
    }
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('task_not_cancelable');
    return {};
  }

  const res =
    cmd.kind === 'fail'
      ? await t.admin.post(`/_emulator/tasks/${task.id}/fail`, { code: cmd.code })
      : await t.admin.post(`/_emulator/tasks/${task.id}/${cmd.action}`, cmd.action === 'complete' ? {} : undefined);
  if (TERMINAL.has(task.status)) {
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('task_finished');
    return {};
  }
  expect(res.status).toBe(200);
  expect(res.body.id).toBe(task.id);
  let expected: Progress;
  if (cmd.kind === 'fail') {
    expected = failed(cmd.code);
  } else if (cmd.action === 'complete') {
    expected = { status: 'succeeded', started_ms: started ?? nowMs, finished_ms: nowMs, code: null };
  } else if (task.status === 'queued') {
    // One step: out of the queue, or failed there if the plan says so.
    expected =
      plan.failure?.during === 'queued'
        ? failed(plan.failure.code)
        : { status: 'processing', started_ms: nowMs, finished_ms: null, code: null };
  } else if (plan.processingMs === null) {
    expected = failed('timeout'); // never finishes on its own: its next transition is the timeout
  } else {
    expected = plan.failure ? failed(plan.failure.code) : { status: 'succeeded', started_ms: started, finished_ms: nowMs, code: null };
  }
  expect(progressOf(res.body as Task)).toEqual(expected);
  return { answered: res.body as Task };
}

/**
 * `numRuns` random command sequences (up to 30 commands each, every command followed by seven reads) on one
 * emulator. All of them run, however long they take: a time limit would let a loaded machine check less and still pass.
 * ledger.property.test.ts runs a few in `npm test`, ledger.soak.ts many in `npm run test:slow`.
 */
export async function checkPointsConserved(numRuns: number): Promise<void> {
  // One emulator for every run; each run opens its own accounts, so runs cannot see each other's points.
  const t = await startEmulator();
  try {
    const listed = await t.admin.get('/_emulator/scenarios');
    // Scenarios with a `text` block are for text calls; every task scenario of the library is exercised here.
    const taskScenarios = (listed.body.data as (WireScenario<FailCode> & { text?: unknown })[]).filter((scenario) => scenario.text === undefined);
    const plans = new Map(taskScenarios.map((scenario) => [scenario.name, scenario]));
    expect([...plans.keys()].sort()).toEqual([...SCENARIOS].sort());
    await fc.assert(
      fc.asyncProperty(balances, fc.array(command, { minLength: 1, maxLength: 30, size: 'max' }), async (openings, commands) => {
        const accounts: Account[] = [];
        for (const opening of openings) accounts.push({ ...(await newAccount(t, opening)), opening });
        let nowMs = Date.parse((await t.admin.get('/_emulator/clock')).body.now as string);
        let observed = await observe(t, accounts, nowMs);
        for (const cmd of commands) {
          const previous = observed;
          const ran = await run(t, accounts, plans, previous, nowMs, cmd);
          nowMs = ran.nowMs ?? nowMs;
          observed = await observe(t, accounts, nowMs);

          // A refused submission creates nothing; an accepted one exactly one task, on its scenario.
          expect(observed.tasks.length).toBe(previous.tasks.length + (ran.created === undefined ? 0 : 1));
          if (cmd.kind === 'submit' && ran.created !== undefined) {
            const added = observed.tasks.find((entry) => entry.task.id === ran.created);
            expect(added?.account_id).toBe(accounts[cmd.account % accounts.length]?.id);
            expect(added?.scenario).toBe(cmd.scenario ?? 'default');
            expect(added?.task.model).toBe(cmd.body.model);
          }
          for (const { task, scenario } of previous.tasks) {
            const after = observed.tasks.find((entry) => entry.task.id === task.id)?.task;
            if (cmd.kind === 'clock' && !TERMINAL.has(task.status)) {
              // The clock moves every unfinished task exactly as its plan says, at the plan's times.
              const expected = byClock(task, planOf(plans.get(scenario) as WireScenario<FailCode>, task.model), nowMs);
              expect(after && progressOf(after)).toEqual(expected);
              if (expected.status === task.status) expect(after).toEqual(task);
            } else if (task.id === ran.answered?.id) {
              // The task a cancel or control step changed is now as it was answered.
              expect(after).toEqual(ran.answered);
            } else {
              // Everything else (finished tasks, and every task but the target of a command) is untouched.
              expect(after).toEqual(task);
            }
          }
        }
        // The same reads once more through the document check, and each key's own list: exactly its account's
        // tasks, newest first, as the control API shows them.
        const final = await observe(t, accounts, nowMs, true);
        expect(final).toEqual(observed);
        for (const account of accounts) {
          const own = await t.as(account.key).get('/v1/tasks?limit=100');
          expect(own.status).toBe(200);
          const expected = observed.tasks.filter((entry) => entry.account_id === account.id).map((entry) => entry.task);
          expect(own.body.data).toEqual(expected.reverse());
        }
      }),
      { numRuns },
    );
  } finally {
    await t.close();
  }
}
