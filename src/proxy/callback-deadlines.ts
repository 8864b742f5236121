import { parseJson } from '../wire/index.ts';
import type { Exchange } from '../wire/index.ts';

/** A task seen terminal whose callback had not come through the proxy by the deadline. */
export const CALLBACK_DEADLINE_CHECK = 'callbacks.arrival.deadline';

/** A task whose callback is overdue: the read that showed it terminal, and when (the deployment's time, ms). */
export interface Overdue {
  taskId: string;
  status: string;
  seenMs: number;
  seen: Exchange;
}

export interface CallbackDeadlines {
  /** What one exchange shows: a relayed submission's task (its callback comes through the proxy), a task read terminal. */
  exchange(exchange: Exchange, relayed: boolean, atMs: number, wallMs: number): void;
  /** A callback came through the proxy, with this raw body. */
  arrived(body: Buffer): void;
  /** Tasks whose callback is overdue at the deployment's `atMs`, each reported once. */
  overdue(atMs: number, wallMs: number): Overdue[];
  /** Real ms until every task overdue at `atMs` has had its grace (0: none waits), for a last look at a stop. */
  graceLeft(atMs: number, wallMs: number): number;
  /** Tasks seen terminal whose callback has not come and is not overdue yet. */
  waiting(): number;
}

interface Entry {
  /** The read that first showed the task terminal: on the deployment's clock and this machine's. */
  seen?: { status: string; atMs: number; wallMs: number; exchange: Exchange };
}

/** Tasks followed at once; the oldest submitted is forgotten first. */
const TASKS_KEPT = 20_000;
const TERMINAL = new Set(['succeeded', 'failed', 'canceled']);
const TASK = /^\/v1\/tasks\/[^/]+(\/cancel)?$/;

/**
 * The callback of each task submitted through the relay, held to a deadline: once a read has shown the task
 * terminal, its callback (the first attempt, or any) must come through the proxy within `windowMs` of the
 * deployment's clock. `graceMs` of real time after the sighting comes first, so a callback still on its way
 * while a clock moved by hand jumps ahead is not taken for a missing one.
 * @see reference "States and transitions" (entering a terminal state triggers one callback), "Events" Delivery
 */
export function createCallbackDeadlines(options: { windowMs: number; graceMs: number }): CallbackDeadlines {
  const tasks = new Map<string, Entry>();
  /** Tasks whose callback came: a submission checked after its task's callback came (its check waits on clocks) waits for nothing. */
  const came = new Set<string>();
  const due = (entry: Entry, atMs: number, wallMs: number): boolean =>
    entry.seen !== undefined && atMs > entry.seen.atMs + options.windowMs && wallMs - entry.seen.wallMs >= options.graceMs;
  return {
    exchange(exchange, relayed, atMs, wallMs) {
      if (exchange.status !== 200) return;
      const path = exchange.path.split('?')[0] ?? '';
      const json = exchange.json as { id?: unknown; status?: unknown; data?: unknown } | undefined;
      if (exchange.method === 'POST' && path === '/v1/tasks') {
        // A replay's task was submitted before, and may not have been relayed then.
        if (!relayed || exchange.headers.get('idempotent-replayed') === 'true' || typeof json?.id !== 'string' || tasks.has(json.id) || came.has(json.id)) return;
        tasks.set(json.id, {});
        if (tasks.size > TASKS_KEPT) tasks.delete(tasks.keys().next().value as string);
      }
      const read = TASK.test(path) ? [json] : exchange.method === 'GET' && path === '/v1/tasks' && Array.isArray(json?.data) ? (json.data as unknown[]) : [];
      for (const item of read) {
        const task = item as { id?: unknown; status?: unknown } | undefined;
        const entry = typeof task?.id === 'string' ? tasks.get(task.id) : undefined;
        if (entry && !entry.seen && typeof task?.status === 'string' && TERMINAL.has(task.status)) entry.seen = { status: task.status, atMs, wallMs, exchange };
      }
    },
    arrived(body) {
      const envelope = parseJson(body.toString('utf8')) as { data?: { id?: unknown } } | undefined;
      const id = envelope?.data?.id;
      // Come: nothing more to wait for (a sighting after it finds nothing to hold to a deadline).
      if (typeof id !== 'string') return;
      tasks.delete(id);
      came.add(id);
      if (came.size > TASKS_KEPT) came.delete(came.values().next().value as string);
    },
    overdue(atMs, wallMs) {
      const found: Overdue[] = [];
      for (const [taskId, entry] of tasks) {
        if (!due(entry, atMs, wallMs) || !entry.seen) continue;
        found.push({ taskId, status: entry.seen.status, seenMs: entry.seen.atMs, seen: entry.seen.exchange });
        tasks.delete(taskId);
      }
      return found;
    },
    graceLeft(atMs, wallMs) {
      let left = 0;
      for (const entry of tasks.values()) {
        if (entry.seen && atMs > entry.seen.atMs + options.windowMs) left = Math.max(left, options.graceMs - (wallMs - entry.seen.wallMs));
      }
      return left;
    },
    waiting: () => [...tasks.values()].filter((entry) => entry.seen !== undefined).length,
  };
}
