import { cmp, isNegative, sub, ZERO } from '../billing/index.ts';
import type { AnswerDeviation } from '../conformance/answers.ts';
import { POINTS } from '../wire/index.ts';
import type { Exchange } from '../wire/index.ts';

/** A task goes forward only: queued, processing, then one terminal state it keeps. */
export const STATUS_ORDER_CHECK = 'lifecycle.status.forward-only';
/** A finished task's points are settled once, as the reference says, and then stay. */
export const POINTS_SETTLED_CHECK = 'billing.points.settled';
export const TASK_CHECKS = [STATUS_ORDER_CHECK, POINTS_SETTLED_CHECK];

/** When the proxy saw an exchange, in machine ms: the request's arrival and the answer's headers. */
export interface ExchangeTimes {
  startedMs: number;
  firstByteMs: number;
}

/** How many tasks are remembered: finished ones are only read again, live ones are still to move. */
export interface TaskMemory {
  finished: number;
  live: number;
}

interface TaskPoints {
  frozen: string;
  charged: string;
  refunded: string;
}

/** A task as last seen. */
interface Seen {
  status: string;
  createdAt: unknown;
  /** Null when not three decimal strings (wire.points.decimal says so). */
  points: TaskPoints | null;
  /** The server had read the task by then; an exchange that started later reads a later state. */
  readByMs: number;
  /** The latest start of an exchange that read this state: it read the task after then. */
  startedMs: number;
}

/** @see reference "States and transitions" */
const RANK: Record<string, number> = { queued: 0, processing: 1, succeeded: 2, failed: 2, canceled: 2 };
const isFinished = (status: string): boolean => RANK[status] === 2;

/**
 * The rules across exchanges about tasks: from every task object a 200 answer carries (submit, get, list, cancel),
 * each task's last seen status and points. A task seen in an earlier state than one seen before, or a finished
 * task seen in another status, has gone back; a finished task's points must add up as settled (and stay). Two
 * exchanges that overlapped in time may have read the task in either order, so only one that started after the
 * other's answer began can have gone back. Memory is bounded: the least recently seen tasks are forgotten first.
 */
export function createTaskRules(memory: TaskMemory = { finished: 5_000, live: 20_000 }): (exchange: Exchange, times?: ExchangeTimes) => AnswerDeviation[] {
  const live = new Map<string, Seen>();
  const finished = new Map<string, Seen>();
  const remember = (id: string, seen: Seen): void => {
    live.delete(id);
    finished.delete(id);
    const [into, cap] = isFinished(seen.status) ? [finished, memory.finished] : [live, memory.live];
    into.set(id, seen);
    if (into.size > cap) into.delete(into.keys().next().value as string);
  };

  return (exchange, times) => {
    const found: AnswerDeviation[] = [];
    for (const task of tasksOf(exchange)) {
      const earlier = live.get(task.id) ?? finished.get(task.id);
      // Same id, another creation time: another task (an emulator reset re-issues ids).
      const prev = earlier?.createdAt === task.seen.createdAt ? earlier : undefined;
      const now: Seen = { ...task.seen, readByMs: times?.firstByteMs ?? -Infinity, startedMs: times?.startedMs ?? -Infinity };
      let kept = now;
      if (prev) {
        const later = times === undefined || times.startedMs >= prev.readByMs;
        if ((RANK[now.status] ?? 0) < (RANK[prev.status] ?? 0)) {
          if (later) found.push(wentBack(task.id, prev.status, now.status));
          kept = prev;
        } else if ((RANK[now.status] ?? 0) > (RANK[prev.status] ?? 0)) {
          // Checked in the order they end: an earlier state may come from an exchange that ended first but started
          // after this one's answer began, so read the task after it.
          if (times !== undefined && prev.startedMs >= times.firstByteMs) found.push(wentBack(task.id, now.status, prev.status));
        } else if (isFinished(prev.status) && now.status !== prev.status) {
          // Two terminal states are never both a task's, whatever order they were read in.
          found.push(wentBack(task.id, prev.status, now.status));
          kept = prev;
        } else if (now.status === prev.status) {
          kept = isFinished(prev.status) ? prev : { ...now, readByMs: Math.max(prev.readByMs, now.readByMs), startedMs: Math.max(prev.startedMs, now.startedMs) };
        }
      }
      const problem = isFinished(now.status) ? pointsProblem(task.id, now, prev) : null;
      if (problem) found.push(problem);
      remember(task.id, kept);
    }
    return found;
  };
}

/** The tasks of a 200 answer of the task endpoints, with what the rules keep of each. */
function tasksOf(exchange: Exchange): { id: string; seen: Omit<Seen, 'readByMs' | 'startedMs'> }[] {
  if (exchange.status !== 200) return [];
  const path = exchange.path.split('?')[0] ?? '';
  const body = exchange.json as { data?: unknown } | undefined;
  let items: unknown[] = [];
  // An idempotent replay "returns the first task": the reference leaves open whether as it is now or as it was
  // first answered (a replayed answer), so it says nothing of the task's order.
  if (exchange.method === 'POST' && path === '/v1/tasks' && exchange.headers.get('idempotent-replayed') === 'true') return [];
  if (exchange.method === 'GET' && path === '/v1/tasks') items = Array.isArray(body?.data) ? body.data : [];
  else if ((exchange.method === 'POST' && (path === '/v1/tasks' || /^\/v1\/tasks\/[^/]+\/cancel$/.test(path))) || (exchange.method === 'GET' && /^\/v1\/tasks\/[^/]+$/.test(path))) items = [body];
  const tasks: { id: string; seen: Omit<Seen, 'readByMs' | 'startedMs'> }[] = [];
  for (const item of items) {
    const task = item as { id?: unknown; status?: unknown; created_at?: unknown; points?: Partial<Record<keyof TaskPoints, unknown>> } | null | undefined;
    // What is not a task of a known status is the schema check's to report.
    if (typeof task?.id !== 'string' || typeof task.status !== 'string' || !(task.status in RANK)) continue;
    const p = task.points;
    const points = [p?.frozen, p?.charged, p?.refunded].every((v) => typeof v === 'string' && POINTS.test(v)) ? (p as TaskPoints) : null;
    tasks.push({ id: task.id, seen: { status: task.status, createdAt: task.created_at, points: points && { frozen: points.frozen, charged: points.charged, refunded: points.refunded } } });
  }
  return tasks;
}

/** A task seen `from` and then `to`, an earlier state or another terminal one: `from` (or a later state) expected. */
const wentBack = (id: string, from: string, to: string): AnswerDeviation => ({
  check: STATUS_ORDER_CHECK,
  message: `task ${id} was ${from} and is now ${to}`,
  expected: isFinished(from) ? from : `${from} or a later state`,
  actual: to,
});

/**
 * A finished task's points: a failure or cancel charges nothing and refunds all that was frozen; a success
 * charges its settlement out of the freeze, refunds what it did not need and collects what it needed beyond it,
 * so charged − collected + refunded = frozen with collected = max(0, charged − frozen) (the task shows no
 * collected field). Checked when first seen finished; after that the points must not change.
 * @see reference "States and transitions", "Model: video-gen-2.0-fast" Rules (the difference refunded or collected)
 */
function pointsProblem(id: string, now: Seen, prev: Seen | undefined): AnswerDeviation | null {
  const points = now.points;
  if (points === null) return null;
  if (prev && isFinished(prev.status)) {
    // Seen finished before: in another status the status rule has said it; in the same, only a change is news.
    if (prev.status !== now.status || prev.points === null || samePoints(prev.points, points)) return null;
    return { check: POINTS_SETTLED_CHECK, message: `the points of ${now.status} task ${id} changed after it finished`, expected: prev.points, actual: points };
  }
  const { frozen, charged } = points;
  const settled =
    now.status === 'succeeded'
      ? { frozen, charged, refunded: cmp(charged, frozen) < 0 ? sub(frozen, charged) : ZERO }
      : { frozen, charged: ZERO, refunded: frozen };
  const negative = Object.values(points).some(isNegative);
  if (!negative && samePoints(settled, points)) return null;
  const rule =
    now.status === 'succeeded'
      ? 'charged − collected + refunded = frozen, collected = max(0, charged − frozen)'
      : 'nothing charged, all that was frozen refunded';
  return { check: POINTS_SETTLED_CHECK, message: `${now.status} task ${id}: ${negative ? 'negative points' : rule}`, expected: settled, actual: points };
}

/** Equal as decimals (`-0.000` is `0.000`). */
const samePoints = (a: TaskPoints, b: TaskPoints): boolean => cmp(a.frozen, b.frozen) === 0 && cmp(a.charged, b.charged) === 0 && cmp(a.refunded, b.refunded) === 0;

