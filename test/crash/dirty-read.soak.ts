import { randomInt } from 'node:crypto';
import { expect, it, onTestFailed } from 'vitest';
import { stateOnDisk } from '../support/state.ts';
import { newAcknowledged, prng } from './acknowledged.ts';
import { adminOf, clientOf, expectStatus, crashWorkspace, openAccounts, startOn } from './emulator-process.ts';
import type { CliEmulator } from './emulator-process.ts';
import { checkLedger } from './invariants.ts';
import { runLoad } from './load.ts';
import type { Op } from './load.ts';
import { expectNotBehind, newSeen, nextAhead, seeCallbacks, startPolling } from './seen.ts';
import type { Seen, TaskView } from './seen.ts';
import { walStage } from './wal.ts';

/**
 * Dirty reads: what a client saw must survive a kill. While clients submit, cancel and advance the manual clock
 * (which runs tasks to their ends, with their charges, refunds, result files and callbacks), other clients poll
 * the tasks and fetch the result files the answers name. Then kill -9 and start again on the same files: no task
 * is behind what any whole answer or callback showed before the kill — not in the store the kill left, nor as the
 * restarted emulator shows it — and every result file served before is served again. Every change is answered
 * only once its transaction committed, and a read sees only committed transactions, so this holds at any moment
 * of the kill; it fails if a read ever shows what is still only in memory (a cache ahead of the store, a commit
 * deferred or batched).
 * Seeded like kill9.soak.ts (CRASH_SEED=<n>); the store files of a failed run are kept.
 */

const SEED = Number(process.env['CRASH_SEED'] ?? randomInt(2 ** 31));
const ROUNDS = 3;
/** Submissions, cancels and clock advances: the requests that move tasks. */
const OPS: readonly Op[] = ['submit', 'submit', 'submit', 'cancel', 'advance', 'advance'];

const ws = crashWorkspace('dirty-read');

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** No task seen is behind in the store the kill left; no result file served is missing from it. */
function checkOnDisk(seen: Seen): void {
  const data = stateOnDisk(ws.db);
  const tasks = new Map(data.tasks.map((stored) => [stored.task.id, stored.task as unknown as TaskView]));
  for (const [id, before] of seen.tasks) {
    const stored = tasks.get(id);
    expect(stored, `task ${id}: ${before.where} showed it ${before.task.status}; it is not in the store file`).toBeDefined();
    if (stored) expectNotBehind(before, stored, 'the store file');
  }
  const names = new Set(data.files.map((f) => f.name));
  for (const [path, task] of seen.files) expect(names.has(path.slice('/files/'.length)), `result file ${path} of task ${task} was served; it is not in the store file`).toBe(true);
}

/** The same through the restarted emulator: every task seen, and every result file served, at its new address. */
async function checkRestarted(cli: CliEmulator, seen: Seen): Promise<void> {
  await Promise.all(
    [...seen.tasks].map(async ([id, before]) => {
      const now = expectStatus<TaskView>(await clientOf(cli.base, before.key).get(`/v1/tasks/${id}`), 200, `GET /v1/tasks/${id}`);
      expectNotBehind(before, now, 'the restarted emulator');
    }),
  );
  await Promise.all(
    [...seen.files].map(async ([path, task]) => {
      const res = await fetch(`${cli.base}${path}`);
      await res.arrayBuffer();
      expect(res.status, `result file ${path} of task ${task} was served before the kill`).toBe(200);
    }),
  );
}

it(`shows no task after a kill -9 behind what a read showed before it (${ROUNDS} rounds, seed ${SEED})`, async () => {
  onTestFailed(() => console.error(`dirty-read: run again with CRASH_SEED=${SEED}`));
  const rng = prng(SEED);
  let cli = await startOn(ws.db);
  const admin = adminOf(cli);
  const accounts = await openAccounts(cli, 2, ws.receiver.url);
  const now = Date.parse(expectStatus<{ now: string }>(await admin.get('/_emulator/clock'), 200, 'clock').now);
  const acked = newAcknowledged(accounts, now);
  const seen = newSeen();

  for (let round = 1; round <= ROUNDS; round += 1) {
    // The kill comes at the first read, after a random while, that shows a task further on than before: the
    // moment a read ahead of the disk would be taken back.
    const killAfterMs = rng.between(300, 1200);
    let ahead = false;
    const polling = startPolling(cli, acked, seen, [0, 1, 2].map(() => prng(rng.int(2 ** 31))));
    const kill = async (): Promise<void> => {
      await pause(killAfterMs);
      ahead = await nextAhead(seen, 1000);
    };
    const load = await runLoad({ cli, acked, round, seed: rng.int(2 ** 31), clients: 3, ops: OPS, until: () => Promise.race([kill(), polling.failed]) });
    await polling.stop();
    const stage = walStage(ws.db);
    seeCallbacks(seen, ws.receiver.received, new Map([...acked.tasks.values()].map((t) => [t.id, t.key])));

    checkOnDisk(seen);
    cli = await startOn(ws.db);
    await checkRestarted(cli, seen);
    for (const account of accounts) await checkLedger(adminOf(cli), account, acked);

    const ended = [...seen.tasks.values()].filter((s) => s.task.finished_at !== null).length;
    console.log(
      `round ${round}: killed after ${killAfterMs} ms${ahead ? ', as a read showed a task further on' : ''}, ${stage}; answered ${JSON.stringify(load.answered)}, cut ${load.cut}; ` +
        `${seen.gets} reads so far had shown ${seen.tasks.size} tasks (${ended} ended) and served ${seen.files.size} result files, ` +
        `${ws.receiver.received.length} callbacks received: none behind after the restart`,
    );
  }
});
