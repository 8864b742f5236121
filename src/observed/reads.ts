import type { History, TaskObservation } from './history.ts';
import { viewTask } from './task-view.ts';
import type { TaskRead } from './task-view.ts';

/**
 * Every task the history shows, by task id, in the order the reads were sent: the answers of the task endpoints
 * and the items of list pages (each a `list-item` read with its page's request and times).
 */
export function readsByTask(history: History, options: { replays: boolean }): Map<string, TaskRead[]> {
  const observations: TaskObservation[] = [...(history.tasks ?? [])];
  for (const page of history.pages ?? []) {
    for (const item of page.items) {
      observations.push({ requestId: page.requestId, kind: 'list-item', sentMs: page.sentMs, receivedMs: page.receivedMs, task: item });
    }
  }
  const byTask = new Map<string, TaskRead[]>();
  for (const obs of observations) {
    // An idempotent replay "returns the first task": as first answered or as it is now, which the idempotency
    // rules judge, so it says nothing of the task's order.
    if (obs.kind === 'replay' && !options.replays) continue;
    if ((obs.answer?.status ?? 200) !== 200) continue;
    const view = viewTask(obs.task);
    if (!view) continue;
    const reads = byTask.get(view.id) ?? [];
    reads.push({ view, obs });
    byTask.set(view.id, reads);
  }
  for (const reads of byTask.values()) reads.sort((a, b) => a.obs.sentMs - b.obs.sentMs);
  return byTask;
}
