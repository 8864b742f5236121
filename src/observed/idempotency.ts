import type { CheckInfo, Deviation, TaskObservation } from './history.ts';
import { idsOf, named, sameJson, viewTask } from './task-view.ts';
import type { TaskRead, TaskView } from './task-view.ts';

export const IDEMPOTENCY_CHECKS = {
  replay: {
    id: 'tasks.idempotency.same-answer',
    holds: 'the same key with the same model and input answers the first task: same id, created_at, input, metadata and freeze, and the body as first answered or as the task is then',
  },
  conflict: { id: 'tasks.idempotency.conflict-refused', holds: 'the same key with another model or input is answered 409 idempotency_conflict and creates nothing' },
} as const satisfies Record<string, CheckInfo>;
const C = IDEMPOTENCY_CHECKS;

/** Fields a replay shares with the first answer whenever it was taken. */
const STABLE = ['id', 'object', 'model', 'created_at', 'input', 'metadata'] as const;

/**
 * Submissions sharing an Idempotency-Key, in the order sent. The first accepted one owns the key; a refusal before
 * it did not use the key. `reads` are every read of each task, to recognise a replay that shows the task as it is.
 * @see reference "POST /v1/tasks" rule 5
 */
export function checkIdempotency(observations: readonly TaskObservation[], reads: ReadonlyMap<string, readonly TaskRead[]>): Deviation[] {
  const found: Deviation[] = [];
  const byKey = new Map<string, TaskObservation[]>();
  for (const obs of observations) {
    if (!obs.key || (obs.kind !== 'submit' && obs.kind !== 'replay')) continue;
    byKey.set(obs.key.idempotencyKey, [...(byKey.get(obs.key.idempotencyKey) ?? []), obs]);
  }
  for (const [key, submits] of byKey) {
    const sorted = [...submits].sort((a, b) => a.sentMs - b.sentMs);
    const owner = sorted.find((o) => accepted(o) !== null);
    const first = owner && accepted(owner);
    if (!owner?.key || !first) continue;
    for (const obs of sorted.slice(sorted.indexOf(owner) + 1)) {
      if (!obs.key) continue;
      const same = obs.key.model === owner.key.model && sameJson(obs.key.input, owner.key.input);
      const status = obs.answer?.status ?? 200;
      if (!same) {
        if (status === 409 && obs.answer?.code === 'idempotency_conflict') continue;
        if (status === 200 || status === 409) {
          found.push({
            check: C.conflict.id,
            message: `key ${key} was used by ${named(owner)} and then with another model or input by ${named(obs)}, answered ${status} ${obs.answer?.code ?? ''}, expected 409 idempotency_conflict`.replace('  ', ' '),
            requestIds: idsOf(owner, obs),
          });
        }
        continue;
      }
      const view = accepted(obs);
      // Limits on requests come before the key is looked at; other refusals say the first task was not returned.
      if (view === null && status === 429) continue;
      const problem = view === null ? `was answered ${status} ${obs.answer?.code ?? ''}`.trimEnd() : replayProblem(first, view, reads.get(first.id) ?? []);
      if (problem) found.push({ check: C.replay.id, message: `key ${key} replayed by ${named(obs)} after ${named(owner)}: ${problem}`, requestIds: idsOf(owner, obs) });
    }
  }
  return found;
}

const accepted = (obs: TaskObservation): TaskView | null => ((obs.answer?.status ?? 200) === 200 ? viewTask(obs.task) : null);

function replayProblem(first: TaskView, replay: TaskView, reads: readonly TaskRead[]): string | null {
  if (replay.id !== first.id) return `answered task ${replay.id}, not the first task ${first.id}`;
  const differs: string[] = STABLE.filter((f) => !sameJson(replay.raw[f], first.raw[f]));
  if (first.points && replay.points && first.points.frozen !== replay.points.frozen) differs.push('points.frozen');
  if (differs.length > 0) return `${differs.join(', ')} differ from the first answer`;
  if (sameJson(replay.raw, first.raw)) return null;
  // Not as first answered: then as the task was at some read in the same status.
  // A status no other read showed cannot be judged here (the lifecycle rules judge the reads).
  const inStatus = reads.filter((r) => r.obs.kind !== 'replay' && r.view.status === replay.status);
  return inStatus.length === 0 || inStatus.some((r) => sameJson(r.view.raw, replay.raw)) ? null : `the body is neither the first answer nor the task as read in status ${replay.status}`;
}
