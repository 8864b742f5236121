import { parseTime } from '../clock/index.ts';
import { isPlainObject } from '../contract/index.ts';
import { parseJson } from '../wire/index.ts';
import type { HarEntry } from '../recording/index.ts';

/**
 * What the recorded task objects say of the replay's clock. A service on real time may answer a poll from a state
 * that is already due to change: its timer for the change has not fired yet (a busy machine), or the answer was
 * decided before the moment it is timed at. Replayed at that moment, the imported scenario (whose phases are the
 * task objects' own times) has moved on: `processing` recorded, `succeeded` replayed. A task object is the
 * better witness of its own age: the replay puts each answer that shows a task before the task's next change and
 * at or after its last one, both counted from the task's submission as the task objects time them.
 */

interface Shown {
  id: string;
  status: string;
}

/** A task's times as its task objects show them (ms, whole seconds), and the entry that submitted it. */
interface Timeline {
  created?: number | undefined;
  started?: number | undefined;
  finished?: number | undefined;
  submission?: number;
}

const timeOf = (value: unknown): number | undefined => {
  const ms = typeof value === 'string' ? parseTime(value) : NaN;
  return Number.isNaN(ms) ? undefined : ms;
};

/** The task objects of a JSON answer: a task (submit, query, cancel) or a list's. */
function taskObjects(entry: HarEntry): Record<string, unknown>[] {
  const text = entry.response.content.text;
  if (text === undefined || /event-stream/i.test(entry.response.content.mimeType)) return [];
  const body = parseJson(text);
  if (!isPlainObject(body)) return [];
  const items = body['object'] === 'list' && Array.isArray(body['data']) ? (body['data'] as unknown[]) : [body];
  return items.filter((item): item is Record<string, unknown> => isPlainObject(item) && item['object'] === 'task' && typeof item['id'] === 'string');
}

const submits = (entry: HarEntry): boolean => {
  if (entry.request.method.toUpperCase() !== 'POST') return false;
  try {
    return /\/v1\/tasks\/?$/.test(new URL(entry.request.url).pathname);
  } catch {
    return /\/v1\/tasks\/?(\?|$)/.test(entry.request.url);
  }
};

/** The bounds of each entry's time on the replay's clock, given the times of the entries before it. */
export interface TaskBounds {
  /** [earliest, latest] for entry `index`; `times` holds the replay times of the entries before it. */
  at(index: number, times: readonly number[]): [number, number];
}

export function taskBounds(entries: readonly HarEntry[]): TaskBounds {
  const shown: Shown[][] = [];
  const timelines = new Map<string, Timeline>();
  for (const [index, entry] of entries.entries()) {
    const here: Shown[] = [];
    for (const task of taskObjects(entry)) {
      const id = task['id'] as string;
      const line = timelines.get(id) ?? {};
      timelines.set(id, line);
      line.created ??= timeOf(task['created_at']);
      line.started ??= timeOf(task['started_at']);
      line.finished ??= timeOf(task['finished_at']);
      if (line.submission === undefined && submits(entry)) line.submission = index;
      here.push({ id, status: typeof task['status'] === 'string' ? task['status'] : '' });
    }
    shown.push(here);
  }
  return {
    at(index, times) {
      let [earliest, latest] = [-Infinity, Infinity];
      for (const { id, status } of shown[index] ?? []) {
        const line = timelines.get(id);
        if (line?.submission === undefined || line.submission >= index || line.created === undefined) continue;
        const since = (times[line.submission] ?? 0) - line.created;
        // Before the next change it has not shown yet (1 ms before: the replay's clock runs a change due at the
        // moment it reaches), at or after the last one it has.
        const next = status === 'queued' ? (line.started ?? line.finished) : status === 'processing' ? line.finished : undefined;
        const last = status === 'queued' ? line.created : status === 'processing' ? line.started : line.finished;
        if (next !== undefined) latest = Math.min(latest, since + next - 1);
        if (last !== undefined) earliest = Math.max(earliest, since + last);
      }
      return [earliest, latest];
    },
  };
}
