import { randomInt } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it, onTestFailed } from 'vitest';
import { loadStoreFile } from '../../src/store/index.ts';
import { startReceiver } from '../support/receiver.ts';
import type { Receiver } from '../support/receiver.ts';
import { newAcknowledged, prng } from './acknowledged.ts';
import type { Acknowledged, Prng, TestAccount } from './acknowledged.ts';
import { checkAcknowledged, checkCallbacks, finishEverything } from './after-restart.ts';
import type { Restarted } from './after-restart.ts';
import { adminOf, eventually, expectStatus, killAll, printed, startOn } from './emulator-process.ts';
import type { CliEmulator } from './emulator-process.ts';
import { compactionStarts, killInsideReset, stageOf, storeFiles } from './compaction.ts';
import { checkLedger, tasksOf } from './invariants.ts';
import { runLoad } from './load.ts';
import type { ScenarioDoc } from './plans.ts';

/**
 * kill -9 under load: the real CLI on a file store, killed at a random moment while parallel clients submit,
 * replay, cancel, query, call text models and advance the clock, then started again on the same files, round after
 * round; the first kill inside a compaction of the journal, the last inside a reset's. After each restart
 * everything acknowledged with a 200 must be there, the points invariants hold for every account, and the tasks
 * left unfinished by the kill finish, with their callbacks, once the clock moves on.
 * The moments and the mix come from one seed, printed on failure (CRASH_SEED=<n> runs the same mix again); the
 * store files of a failed run are kept.
 */

const SEED = Number(process.env['CRASH_SEED'] ?? randomInt(2 ** 31));
/** Rounds under load; one more kills a reset's compaction. */
const ROUNDS = 5;
const CLIENTS = 4;
/** 64 KB: while the store is small, the journal is folded into a new snapshot every few hundred requests. */
const STORE_FLAGS = ['--compact-after-mb', '0.0625'];
const start = (): Promise<CliEmulator> => startOn(db, STORE_FLAGS);

let dir: string;
let db: string;
let receiver: Receiver;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-crash-'));
  db = join(dir, 'db.json');
  receiver = await startReceiver();
});
afterEach(async ({ task }) => {
  killAll();
  await receiver.close();
  // A failure keeps the store files for a look, with what each process printed (so does CRASH_KEEP=1).
  if (task.result?.state === 'fail' || process.env['CRASH_KEEP']) {
    await writeFile(join(dir, 'processes.log'), printed().map((out, i) => `--- process ${i + 1}\n${out}`).join('\n'));
    console.error(`kill9: store files kept in ${dir}`);
  } else {
    await rm(dir, { recursive: true, force: true });
  }
});

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function openAccounts(cli: CliEmulator, count: number): Promise<TestAccount[]> {
  const admin = adminOf(cli);
  const accounts: TestAccount[] = [];
  for (let i = 0; i < count; i += 1) {
    const opening = '5000000.000';
    const account = expectStatus<{ id: string; webhook_secret: string }>(
      await admin.post('/_emulator/accounts', { points: opening, webhook_url: receiver.url }),
      201,
      'create account',
    );
    const key = expectStatus<{ key: string }>(await admin.post(`/_emulator/accounts/${account.id}/keys`, {}), 201, 'create key');
    accounts.push({ id: account.id, key: key.key, secret: account.webhook_secret, opening });
  }
  return accounts;
}

/** The store on disk, read as a restart reads it, holds every acknowledged task, cancel and Idempotency-Key. */
async function checkStoreFile(acked: Acknowledged): Promise<void> {
  const { data } = await loadStoreFile(db);
  for (const task of acked.tasks.values()) {
    const stored = data.tasks[task.id];
    expect(stored?.task.model, `acknowledged task ${task.id} (round ${task.round}) is not in the store file`).toBe(task.model);
    if (acked.canceled.has(task.id)) expect(stored?.task.status).toBe('canceled');
    if (task.idempotency) expect(data.idempotency[`${task.accountId} ${task.idempotency.key}`]?.task_id, `Idempotency-Key ${task.idempotency.key}`).toBe(task.id);
  }
}

/** Starts the emulator again on the same files and checks everything; returns it running, every task finished. */
async function restartAndCheck(acked: Acknowledged, plans: Map<string, ScenarioDoc>, round: number, rng: Prng): Promise<{ cli: CliEmulator; summary: string }> {
  await checkStoreFile(acked);
  const cli = await start();
  return { cli, summary: await checkRestarted(cli, acked, plans, round, rng) };
}

/** Everything acknowledged is there and the invariants hold; then every task finishes and is called back. */
async function checkRestarted(cli: CliEmulator, acked: Acknowledged, plans: Map<string, ScenarioDoc>, round: number, rng: Prng): Promise<string> {
  const r: Restarted = { base: cli.base, admin: adminOf(cli), acked, plans };
  const { unfinished } = await checkAcknowledged(r, round, rng);
  const tasks = await finishEverything(r);
  await checkCallbacks(r, tasks, receiver.received);
  return `${unfinished.length} unfinished at the restart, all finished and called back since`;
}

/** No callback under way: every message of the test accounts delivered. */
async function quiet(cli: CliEmulator, acked: Acknowledged): Promise<void> {
  const admin = adminOf(cli);
  const settled = await eventually(async () => {
    for (const account of acked.accounts) {
      const { data } = expectStatus<{ data: { status: string }[] }>(await admin.get(`/_emulator/webhooks/deliveries?account=${account.id}`), 200, 'deliveries');
      if (data.some((d) => d.status === 'pending')) return false;
    }
    return true;
  });
  expect(settled, 'the callbacks settle once the clients stop').toBe(true);
}

/**
 * After a kill inside a reset's compaction the store is either the one before the reset, with everything
 * acknowledged (checked as after any kill), or the fresh one the reset makes; never a mix.
 */
async function checkAfterResetKill(acked: Acknowledged, plans: Map<string, ScenarioDoc>, round: number, rng: Prng, resetAcknowledged: boolean): Promise<string> {
  const { data } = await loadStoreFile(db);
  const wiped = acked.accounts.map((a) => !Object.hasOwn(data.accounts, a.id));
  expect(new Set(wiped).size, 'the reset took effect for every account or for none').toBe(1);
  if (resetAcknowledged) expect(wiped[0], 'an answered reset is kept').toBe(true);
  if (!wiped[0]) return `the reset was lost with the process; ${(await restartAndCheck(acked, plans, round, rng)).summary}`;
  const admin = adminOf(await start());
  const accounts = expectStatus<{ data: { id: string }[] }>(await admin.get('/_emulator/accounts'), 200, 'accounts').data;
  expect(accounts.map((a) => a.id), 'a fresh store: the demo account alone').toEqual(['acct_demo']);
  await checkLedger(admin, { id: 'acct_demo', opening: '100000.000' }, acked);
  expect(await tasksOf(admin, 'acct_demo')).toEqual([]);
  return `the reset was kept${resetAcknowledged ? ' (it was answered)' : ' (it was not answered)'}: a fresh store`;
}

it(`keeps everything acknowledged through ${ROUNDS + 1} kill -9 rounds, the first inside a journal compaction under load, the last inside a reset (seed ${SEED})`, { timeout: 60_000 }, async () => {
  onTestFailed(() => console.error(`kill9: run again with CRASH_SEED=${SEED}`));
  const rng = prng(SEED);
  let cli = await start();
  const admin = adminOf(cli);
  const scenarios = expectStatus<{ data: ScenarioDoc[] }>(await admin.get('/_emulator/scenarios'), 200, 'scenarios').data;
  const plans = new Map(scenarios.map((s) => [s.name, s]));
  const now = Date.parse(expectStatus<{ now: string }>(await admin.get('/_emulator/clock'), 200, 'clock').now);
  const acked = newAcknowledged(await openAccounts(cli, 3), now);

  for (let round = 1; round <= ROUNDS; round += 1) {
    // The first kill waits for the journal's first compaction to begin (a few hundred requests in), then comes at
    // once or a few milliseconds later; the others after a random delay, compaction or not.
    const killAfterMs = rng.between(round === 1 ? 0 : 150, round === 1 ? 4 : 1200);
    const before = await storeFiles(db);
    const load = await runLoad({
      cli,
      acked,
      round,
      seed: rng.int(2 ** 31),
      clients: CLIENTS,
      until: async () => {
        if (round === 1) await compactionStarts(db, 10_000);
        await pause(killAfterMs);
      },
    });
    const stage = stageOf(before, await storeFiles(db));
    if (round === 1) expect(stage, 'the first kill landed inside a compaction').toMatch(/^(while|before the new|after the new)/);
    const restarted = await restartAndCheck(acked, plans, round, rng);
    cli = restarted.cli;
    const when = round === 1 ? `${killAfterMs} ms after a compaction began, ${stage}` : `after ${killAfterMs} ms (last compaction: ${stage})`;
    console.log(`round ${round}: killed ${when}; answered ${JSON.stringify(load.answered)}, cut ${load.cut}; ${restarted.summary}`);
  }

  // One more round: the same load for a while, then, once it has stopped and the callbacks have settled, a reset
  // whose compaction is killed at a random point (see compaction.ts). On a quiet store, so that what is checked
  // is the compaction cut short: a reset under load is covered by regressions.test.ts (the reset is one journal
  // line, in order with the writes around it).
  const loadMs = rng.between(150, 600);
  const point = rng.pick(['writing', 'in place'] as const);
  const load = await runLoad({ cli, acked, round: ROUNDS + 1, seed: rng.int(2 ** 31), clients: CLIENTS, stopOnly: true, until: () => pause(loadMs) });
  await quiet(cli, acked);
  const before = await storeFiles(db);
  const reset = await killInsideReset(cli, db, point);
  const stage = stageOf(before, await storeFiles(db));
  expect(stage, 'the kill landed inside the compaction').not.toBe('no compaction had begun');
  const summary = await checkAfterResetKill(acked, plans, ROUNDS + 1, rng, reset.acknowledged);
  console.log(`round ${ROUNDS + 1}: load for ${loadMs} ms (answered ${JSON.stringify(load.answered)}), then a reset killed ${stage}; ${summary}`);
});
