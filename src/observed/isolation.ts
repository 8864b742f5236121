import type { CheckInfo, Deviation, History, TaskObservation } from './history.ts';
import { readsByTask } from './reads.ts';
import { idsOf, named, viewTask } from './task-view.ts';
import type { TaskRead } from './task-view.ts';

export const ISOLATION_CHECKS = {
  otherAccount: { id: 'tasks.isolation.observed', holds: 'a task created through one account’s key is never read 200, listed, canceled or replayed through another account’s key' },
} as const satisfies Record<string, CheckInfo>;
const C = ISOLATION_CHECKS;

/**
 * Tasks created in one of the two histories and seen in the other: either way round, each such task once for each
 * way it was seen.
 * @see reference "GET /v1/tasks/{id}" (only tasks of the caller's account are visible), "Authentication" 4
 */
export function checkIsolation(history: History): Deviation[] {
  const others = history.others ?? [];
  if (others.length === 0) return [];
  const found: Deviation[] = [];
  const mine = { created: createdIn(history.tasks ?? []), reads: readsByTask(history, { replays: true }) };
  for (const other of others) {
    const theirs = { created: createdIn(other.tasks ?? []), reads: readsByTask({ tasks: other.tasks ?? [], pages: other.pages ?? [] }, { replays: true }) };
    const theirName = `another account’s key ${other.account}`;
    for (const [creator, reader, creatorName, readerName] of [
      [theirs, mine, theirName, 'this account’s key'],
      [mine, theirs, 'this account’s key', theirName],
    ] as const) {
      for (const [id, reads] of reader.reads) {
        const submit = creator.created.get(id);
        if (!submit || reader.created.has(id)) continue;
        // Each way it was seen (read, listed, canceled, replayed) once: not every poll of it.
        const firsts = new Map<string, TaskRead>();
        for (const r of reads) if (r.obs.kind !== 'submit' && !firsts.has(verb(r))) firsts.set(verb(r), r);
        for (const [how, read] of firsts) {
          found.push({ check: C.otherAccount.id, message: `task ${id} was created through ${creatorName} (${named(submit)}) and ${how} through ${readerName} (${named(read.obs)})`, requestIds: idsOf(submit, read.obs) });
        }
      }
    }
  }
  return found;
}

const VERBS: Readonly<Record<string, string>> = { 'list-item': 'listed', cancel: 'canceled', replay: 'answered as an idempotent replay' };
const verb = (read: TaskRead): string => VERBS[read.obs.kind] ?? 'read 200';

/** The tasks a history's accepted submissions created, by id. */
function createdIn(tasks: readonly TaskObservation[]): Map<string, TaskObservation> {
  const created = new Map<string, TaskObservation>();
  for (const obs of tasks) {
    if (obs.kind !== 'submit' || (obs.answer?.status ?? 200) !== 200) continue;
    const view = viewTask(obs.task);
    if (view && !created.has(view.id)) created.set(view.id, obs);
  }
  return created;
}
