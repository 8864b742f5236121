import type { CheckInfo, Deviation } from './history.ts';
import { idsOf, isTerminal, named, readAfter, sameJson, timeMs } from './task-view.ts';
import type { Status, TaskRead } from './task-view.ts';

export const LIFECYCLE_CHECKS = {
  forwardOnly: {
    id: 'lifecycle.status.forward-only',
    holds: 'a task moves only forward (queued → processing → succeeded/failed; queued → failed; queued/processing → canceled); reads that overlapped in time may see either order; two terminal states are never one task’s',
  },
  terminalUnchanged: { id: 'lifecycle.terminal.unchanged', holds: 'a terminal task never changes again: error, output, started_at, finished_at' },
  createdAt: { id: 'lifecycle.created-at.unchanged', holds: 'created_at is the same on every read of a task' },
  timesOrdered: { id: 'lifecycle.times.ordered', holds: 'created_at ≤ started_at ≤ finished_at on every read' },
  started: { id: 'lifecycle.times.started', holds: 'started_at is null while queued, set when processing and on success, and never changes once set' },
  finished: { id: 'lifecycle.times.finished', holds: 'finished_at is set exactly when the task is terminal' },
  output: { id: 'lifecycle.output.success-only', holds: 'output is present on success and null in every other status' },
  error: { id: 'lifecycle.error.failure-only', holds: 'error is present on failure and cancel and null otherwise' },
  afterStart: { id: 'lifecycle.read.after-start', holds: 'a task read after its own started_at (allowing for clock skew) is not queued' },
  beijing: { id: 'wire.time.beijing', holds: 'task times are ISO 8601 with offset +08:00 (or null where the reference allows)' },
} as const satisfies Record<string, CheckInfo>;
const C = LIFECYCLE_CHECKS;

/** Statuses a task may be seen in after being seen in one: the documented graph's reachable states. */
const REACHABLE: Readonly<Record<Status, readonly Status[]>> = {
  queued: ['queued', 'processing', 'succeeded', 'failed', 'canceled'],
  processing: ['processing', 'succeeded', 'failed', 'canceled'],
  succeeded: ['succeeded'],
  failed: ['failed'],
  canceled: ['canceled'],
};
const BEIJING = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?\+08:00$/;

/**
 * The task lifecycle over all reads of one task (sorted by sentMs).
 * @see reference "Task object", "States and transitions"
 */
export function checkLifecycle(id: string, reads: readonly TaskRead[], skewMs: number): Deviation[] {
  const found: Deviation[] = [];
  const push = (check: CheckInfo, message: string, ...involved: TaskRead[]): void => {
    found.push({ check: check.id, message, requestIds: idsOf(...involved.map((r) => r.obs)) });
  };
  for (const read of reads) found.push(...checkRead(read));

  const first = reads[0];
  for (const [i, a] of reads.entries()) {
    for (const b of reads.slice(i + 1)) {
      const [x, y] = readAfter(a.obs, b.obs) ? [b, a] : [a, b];
      const ordered = readAfter(y.obs, x.obs);
      const from = x.view.status;
      const to = y.view.status;
      const bothTerminal = isTerminal(from) && isTerminal(to);
      if ((bothTerminal && from !== to) || (ordered && !REACHABLE[from].includes(to))) {
        push(C.forwardOnly, `task ${id} was ${from} (${named(x.obs)}) and then ${to} (${named(y.obs)})`, x, y);
      }
    }
    if (first && a !== first && !sameJson(a.view.createdAt, first.view.createdAt)) {
      push(C.createdAt, `task ${id} created_at ${String(first.view.createdAt)} (${named(first.obs)}) became ${String(a.view.createdAt)} (${named(a.obs)})`, first, a);
    }
  }

  const started = reads.find((r) => r.view.startedAt !== null && r.view.startedAt !== undefined);
  if (started) {
    for (const r of reads) {
      if (r.view.startedAt !== null && r.view.startedAt !== undefined && !sameJson(r.view.startedAt, started.view.startedAt)) {
        push(C.started, `task ${id} started_at ${String(started.view.startedAt)} (${named(started.obs)}) changed to ${String(r.view.startedAt)} (${named(r.obs)})`, started, r);
      }
    }
    // started_at is whole seconds: the start happened within a second after it.
    const startMs = timeMs(started.view.startedAt);
    for (const r of reads) {
      if (startMs !== null && r.view.status === 'queued' && r.obs.sentMs >= startMs + 1000 + skewMs) {
        push(C.afterStart, `task ${id} read queued (${named(r.obs)}) after its started_at ${String(started.view.startedAt)} (${named(started.obs)})`, started, r);
      }
    }
  }

  const terminal = reads.find((r) => isTerminal(r.view.status));
  for (const r of reads) {
    if (!terminal || r === terminal || r.view.status !== terminal.view.status) continue;
    const changed = (['error', 'output', 'started_at', 'finished_at'] as const).filter((f) => !sameJson(r.view.raw[f], terminal.view.raw[f]));
    if (changed.length > 0) push(C.terminalUnchanged, `${terminal.view.status} task ${id} changed ${changed.join(', ')} between ${named(terminal.obs)} and ${named(r.obs)}`, terminal, r);
  }
  return found;
}

/** The rules one read holds on its own. */
function checkRead(read: TaskRead): Deviation[] {
  const { view, obs } = read;
  const found: Deviation[] = [];
  const push = (check: CheckInfo, problem: string): void => {
    found.push({ check: check.id, message: `${view.status} task ${view.id} (${named(obs)}): ${problem}`, requestIds: idsOf(obs) });
  };
  const times = { created_at: view.createdAt, started_at: view.startedAt, finished_at: view.finishedAt };
  for (const [field, value] of Object.entries(times)) {
    const nullable = field !== 'created_at';
    if (!(nullable && value === null) && !(typeof value === 'string' && BEIJING.test(value))) push(C.beijing, `${field} is ${JSON.stringify(value)}, not an ISO 8601 time with +08:00`);
  }
  const [created, start, finish] = [timeMs(view.createdAt), timeMs(view.startedAt), timeMs(view.finishedAt)];
  const order = [created, start, finish].filter((t): t is number => t !== null);
  if (order.some((t, i) => i > 0 && t < (order[i - 1] ?? t))) push(C.timesOrdered, `created_at ${String(view.createdAt)}, started_at ${String(view.startedAt)}, finished_at ${String(view.finishedAt)} are not in order`);

  const hasStart = view.startedAt !== null && view.startedAt !== undefined;
  if (view.status === 'queued' && hasStart) push(C.started, `started_at is ${String(view.startedAt)} while queued`);
  if ((view.status === 'processing' || view.status === 'succeeded') && !hasStart) push(C.started, 'started_at is null after the task started');
  const hasFinish = view.finishedAt !== null && view.finishedAt !== undefined;
  if (hasFinish !== isTerminal(view.status)) push(C.finished, `finished_at is ${String(view.finishedAt)}`);

  const hasOutput = view.output !== null && view.output !== undefined;
  if (hasOutput !== (view.status === 'succeeded')) push(C.output, `output is ${hasOutput ? 'present' : 'null'}`);
  const hasError = view.error !== null && view.error !== undefined;
  if (hasError !== (view.status === 'failed' || view.status === 'canceled')) push(C.error, `error is ${hasError ? 'present' : 'null'}`);
  return found;
}

