import { isPlainObject } from '../contract/index.ts';
import type { HarEntry } from './har.ts';
import type { Recording } from './read.ts';
import { parseJson, redactedEntry } from './recorded-content.ts';

/** The tasks of a recording as its answers showed them: the task objects of each (a list's included) and its cancels. */

export interface TaskBody {
  id: string;
  object: 'task';
  model?: string;
  status?: string;
  created_at?: string | null;
  started_at?: string | null;
  finished_at?: string | null;
  input?: Record<string, unknown>;
  output?: { text?: unknown; files?: unknown; duration?: unknown; usage?: unknown } | null;
  error?: { code?: unknown; message?: unknown } | null;
}

/** A task as the recording saw it: its answers' task objects in time order, and its cancels. */
export interface SeenTask {
  id: string;
  model: string | undefined;
  seen: { atMs: number; body: TaskBody }[];
  /** The statuses the task's cancels were answered with. */
  cancels: number[];
  redacted: boolean;
}

/** When the answer's first byte came: what a task object in it shows is of that moment. */
const answeredAt = (entry: HarEntry): number =>
  Date.parse(entry.startedDateTime) + Math.max(0, entry.timings.send) + Math.max(0, entry.timings.wait);

/** The task objects of an answer: a task (submit, query, cancel) or a list's. */
function taskBodiesOf(entry: HarEntry): TaskBody[] {
  const body = parseJson(entry.response.content.text);
  if (!isPlainObject(body)) return [];
  const items = body['object'] === 'list' && Array.isArray(body['data']) ? (body['data'] as unknown[]) : [body];
  return items.filter((item): item is TaskBody => isPlainObject(item) && item['object'] === 'task' && typeof item['id'] === 'string');
}

/**
 * Every task of the recording (its pages, and the tasks its exchanges name), in the order first seen, with the
 * task objects any answer showed of it (a list's included).
 */
export function seenTasks(recording: Recording): SeenTask[] {
  const tasks = new Map<string, SeenTask>();
  const taskOf = (id: string, model?: string): SeenTask => {
    let task = tasks.get(id);
    if (!task) tasks.set(id, (task = { id, model, seen: [], cancels: [], redacted: false }));
    return task;
  };
  for (const page of recording.pages) taskOf(page.id, page._svcEmulator?.model);
  for (const entry of recording.entries) {
    const id = entry._svcEmulator?.task ?? entry.pageref;
    if (id !== undefined) taskOf(id);
  }
  for (const entry of recording.entries) {
    const id = entry._svcEmulator?.task ?? entry.pageref;
    const bodies = taskBodiesOf(entry);
    if (id !== undefined && entry.request.method === 'POST' && /\/v1\/tasks\/[^/?]+\/cancel(\?|$)/.test(entry.request.url)) {
      tasks.get(id)?.cancels.push(entry.response.status);
    }
    for (const task of new Set([...(id === undefined ? [] : [tasks.get(id)]), ...bodies.map((b) => tasks.get(b.id))])) {
      if (task && redactedEntry(entry)) task.redacted = true;
    }
    for (const body of bodies) tasks.get(body.id)?.seen.push({ atMs: answeredAt(entry), body });
  }
  for (const task of tasks.values()) task.seen.sort((a, b) => a.atMs - b.atMs);
  return [...tasks.values()];
}
