import { randomInt } from 'node:crypto';
import { expect, it, onTestFailed } from 'vitest';
import type { StateDocument } from '../../src/state/index.ts';
import { stateOnDisk } from '../support/state.ts';
import { newAcknowledged, prng } from './acknowledged.ts';
import type { Acknowledged, Prng } from './acknowledged.ts';
import { checkAcknowledged, checkCallbacks, finishEverything } from './after-restart.ts';
import type { Restarted } from './after-restart.ts';
import { adminOf, DEMO_KEY, eventually, expectStatus, crashWorkspace, openAccounts, startOn } from './emulator-process.ts';
import type { CliEmulator } from './emulator-process.ts';
import { checkLedger, tasksOf } from './invariants.ts';
import { runLoad } from './load.ts';
import type { WireScenario } from '../support/wire-task.ts';
import { nextWrite, walStage } from './wal.ts';
import { busier } from '../support/busy.ts';

/**
 * kill -9 under load: the real CLI on a SQLite store, killed at a random moment while parallel clients submit,
 * replay, cancel, query, call text models and advance the clock, then started again on the same files, round after
 * round; the first kill as a checkpoint copies the write-ahead log into the store file, the last inside a reset.
 * After each kill the store on disk holds everything acknowledged with a 200; after each restart the emulator
 * shows it, the points invariants hold for every account, and the tasks left unfinished by the kill finish, with
 * their callbacks, once the clock moves on.
 * The moments and the mix come from one seed, printed on failure (CRASH_SEED=<n> runs the same mix again); the
 * store files of a failed run are kept.
 */

const SEED = Number(process.env['CRASH_SEED'] ?? randomInt(2 ** 31));
/** Rounds under load; one more kills a reset. */
const ROUNDS = 5;
const CLIENTS = 4;
const ws = crashWorkspace('kill9');
const start = (): Promise<CliEmulator> => startOn(ws.db);

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * What the killed process left on disk: read without taking the store or writing to it (the `-wal` and `-shm`
 * stay as the kill left them, for the restarted emulator to recover on its own).
 */
const leftOnDisk = (): StateDocument => stateOnDisk(ws.db);

/** The store on disk holds every acknowledged task, cancel and Idempotency-Key. */
function checkStoreFile(acked: Acknowledged, data: StateDocument): void {
  const tasks = new Map(data.tasks.map((stored) => [stored.task.id, stored]));
  const keys = new Map(data.idempotency.map((record) => [`${record.account_id} ${record.key}`, record]));
  for (const task of acked.tasks.values()) {
    const stored = tasks.get(task.id);
    expect(stored?.task.model, `acknowledged task ${task.id} (round ${task.round}) is not in the store file`).toBe(task.model);
    if (acked.canceled.has(task.id)) expect(stored?.task.status).toBe('canceled');
    if (task.idempotency) expect(keys.get(`${task.accountId} ${task.idempotency.key}`)?.task_id, `Idempotency-Key ${task.idempotency.key}`).toBe(task.id);
  }
}

/** Starts the emulator again on the same files and checks everything; returns it running, every task finished. */
async function restartAndCheck(acked: Acknowledged, plans: Map<string, WireScenario>, round: number, rng: Prng): Promise<{ cli: CliEmulator; summary: string }> {
  checkStoreFile(acked, leftOnDisk());
  const cli = await start();
  return { cli, summary: await checkRestarted(cli, acked, plans, round, rng) };
}

/** Everything acknowledged is there and the invariants hold; then every task finishes and is called back. */
async function checkRestarted(cli: CliEmulator, acked: Acknowledged, plans: Map<string, WireScenario>, round: number, rng: Prng): Promise<string> {
  const r: Restarted = { base: cli.base, admin: adminOf(cli), acked, plans };
  const { unfinished } = await checkAcknowledged(r, round, rng);
  const tasks = await finishEverything(r);
  await checkCallbacks(r, tasks, ws.receiver.received);
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

/** Where a reset is killed: a few milliseconds after it is sent, or the moment it writes to the log. */
type ResetKill = { afterMs: number } | 'at its write';

/** Sends a reset and kills the process at `point` (or once the reset is answered); resolves whether it was. */
async function killDuringReset(cli: CliEmulator, point: ResetKill): Promise<{ acknowledged: boolean }> {
  // Nothing else writes now (the clients have stopped, the callbacks have settled): the log's next write is the reset's.
  const written = nextWrite(`${ws.db}-wal`, 5_000);
  const acknowledged = adminOf(cli)
    .post('/_emulator/reset')
    .then(
      (reply) => reply.status === 200,
      () => false,
    );
  await Promise.race([point === 'at its write' ? written : pause(point.afterMs), acknowledged]);
  cli.child.kill('SIGKILL');
  await cli.exited;
  return { acknowledged: await acknowledged };
}

/**
 * After a kill during a reset the store is either the one before the reset, every record as it was (and so with
 * everything acknowledged, checked again as after any kill), or the fresh one the reset makes; never a mix. The
 * reset is one transaction: its deletions and the demo account's seed commit together or not at all.
 */
async function checkAfterResetKill(
  acked: Acknowledged,
  plans: Map<string, WireScenario>,
  round: number,
  rng: Prng,
  before: StateDocument,
  resetAcknowledged: boolean,
): Promise<{ summary: string; cli: CliEmulator }> {
  const data = leftOnDisk();
  const wiped = acked.accounts.map((a) => !data.accounts.some((stored) => stored.id === a.id));
  expect(new Set(wiped).size, 'the reset took effect for every account or for none').toBe(1);
  if (resetAcknowledged) expect(wiped[0], 'an answered reset is kept').toBe(true);
  if (!wiped[0]) {
    // Nothing ran between the copy and the reset (the clients had stopped, the callbacks had settled).
    expect(data, 'the store before the reset, every record as it was').toEqual(before);
    const restarted = await restartAndCheck(acked, plans, round, rng);
    return { summary: `the reset was lost with the process; ${restarted.summary}`, cli: restarted.cli };
  }
  // The fresh store, every table of it: the demo account funded once, and nothing else.
  expect(data.accounts.map((a) => a.id), 'a fresh store: the demo account alone').toEqual(['acct_demo']);
  expect(data.keys.map((k) => [k.key, k.account_id]), 'a fresh store: the demo key alone').toEqual([[DEMO_KEY, 'acct_demo']]);
  expect(data.ledger.map((e) => [e.account_id, e.kind, e.points]), 'a fresh store: the demo account funded once').toEqual([['acct_demo', 'fund', '100000.000']]);
  const rest = { tasks: data.tasks, idempotency: data.idempotency, files: data.files, deliveries: data.deliveries, calls: data.calls, scenarios: data.scenarios };
  expect(rest, 'a fresh store: no record of before the reset').toEqual({ tasks: [], idempotency: [], files: [], deliveries: [], calls: [], scenarios: [] });
  const cli = await start();
  const admin = adminOf(cli);
  const accounts = expectStatus<{ data: { id: string }[] }>(await admin.get('/_emulator/accounts'), 200, 'accounts').data;
  expect(accounts.map((a) => a.id), 'a fresh store: the demo account alone').toEqual(['acct_demo']);
  await checkLedger(admin, { id: 'acct_demo', opening: '100000.000' }, acked);
  expect(await tasksOf(admin, 'acct_demo')).toEqual([]);
  return { summary: `the reset was kept${resetAcknowledged ? ' (it was answered)' : ' (it was not answered)'}: a fresh store`, cli };
}

it(`keeps everything acknowledged through ${ROUNDS + 1} kill -9 rounds, the first as the write-ahead log is checkpointed under load, the last inside a reset, and an answered reset kept (seed ${SEED})`, { timeout: 120_000 * busier }, async () => {
  onTestFailed(() => console.error(`kill9: run again with CRASH_SEED=${SEED}`));
  const rng = prng(SEED);
  let cli = await start();
  const admin = adminOf(cli);
  const scenarios = expectStatus<{ data: WireScenario[] }>(await admin.get('/_emulator/scenarios'), 200, 'scenarios').data;
  const plans = new Map(scenarios.map((s) => [s.name, s]));
  const now = Date.parse(expectStatus<{ now: string }>(await admin.get('/_emulator/clock'), 200, 'clock').now);
  const acked = newAcknowledged(await openAccounts(cli, 3, ws.receiver.url), now);

  for (let round = 1; round <= ROUNDS; round += 1) {
    // The first kill waits for a checkpoint to begin copying the log into the store file (every few hundred
    // writes: the log holds 1000 pages by then), then comes at once or a few milliseconds later; the others after
    // a random delay, wherever the log is.
    const killAfterMs = rng.between(round === 1 ? 0 : 150, round === 1 ? 4 : 1200);
    let checkpointed = false;
    const load = await runLoad({
      cli,
      acked,
      round,
      seed: rng.int(2 ** 31),
      clients: CLIENTS,
      until: async () => {
        if (round === 1) checkpointed = await nextWrite(ws.db, 10_000);
        await pause(killAfterMs);
      },
    });
    const stage = walStage(ws.db);
    if (round === 1) expect(checkpointed, 'a checkpoint began under load').toBe(true);
    const restarted = await restartAndCheck(acked, plans, round, rng);
    cli = restarted.cli;
    const when = round === 1 ? `${killAfterMs} ms after a checkpoint began writing the store file` : `after ${killAfterMs} ms`;
    console.log(`round ${round}: killed ${when}, ${stage}; answered ${JSON.stringify(load.answered)}, cut ${load.cut}; ${restarted.summary}`);
  }

  // One more round: the same load for a while, then, once it has stopped and the callbacks have settled, a reset
  // killed a random few milliseconds after it is sent, or as it writes its transaction to the log. On a quiet store, so that what is on disk before it is
  // known record by record: a reset with requests in flight is covered by regressions.test.ts.
  const loadMs = rng.between(150, 600);
  const point: ResetKill = rng.int(3) === 0 ? 'at its write' : { afterMs: rng.between(0, 5) };
  const when = point === 'at its write' ? 'as it wrote to the log' : `${point.afterMs} ms after it was sent`;
  const load = await runLoad({ cli, acked, round: ROUNDS + 1, seed: rng.int(2 ** 31), clients: CLIENTS, stopOnly: true, until: () => pause(loadMs) });
  await quiet(cli, acked);
  const before = stateOnDisk(ws.db);
  const reset = await killDuringReset(cli, point);
  const stage = walStage(ws.db);
  const after = await checkAfterResetKill(acked, plans, ROUNDS + 1, rng, before, reset.acknowledged);
  console.log(`round ${ROUNDS + 1}: load for ${loadMs} ms (answered ${JSON.stringify(load.answered)}), then a reset killed ${when}, ${stage}; ${after.summary}`);

  // Whether that reset was answered is chance; an answered one must be kept every time: one more, with an account
  // of its own to wipe, killed the moment its answer is in.
  const admin2 = adminOf(after.cli);
  const doomed = expectStatus<{ id: string }>(await admin2.post('/_emulator/accounts', { points: '1.000' }), 201, 'account').id;
  expectStatus(await admin2.post('/_emulator/reset', {}), 200, 'reset');
  after.cli.child.kill('SIGKILL');
  await after.cli.exited;
  const kept = leftOnDisk();
  expect(kept.accounts.map((a) => a.id), `an answered reset is kept (${doomed} wiped)`).toEqual(['acct_demo']);
  expect(kept.tasks, 'an answered reset is kept: no task').toEqual([]);
});
