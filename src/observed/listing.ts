import type { CheckInfo, Deviation, ListPageObservation } from './history.ts';
import { idsOf, named, sameJson, timeMs, viewTask } from './task-view.ts';
import type { TaskRead, TaskView } from './task-view.ts';

export const LISTING_CHECKS = {
  limit: { id: 'tasks.list.limit', holds: 'a page holds at most `limit` items' },
  newestFirst: { id: 'tasks.list.newest-first', holds: 'items are newest first: created_at never increases down a page or across the pages of a walk' },
  filter: { id: 'tasks.list.filter', holds: 'every item matches the status and model filters' },
  noRepeat: { id: 'tasks.list.no-repeat', holds: 'no task is on two pages of one walk taken without submits or a status filter in between' },
  noGap: { id: 'tasks.list.no-gap', holds: 'no known task created before the walk is missing between consecutive pages or after a last page (has_more false), for walks without submits in between or a status filter' },
  asGet: { id: 'tasks.list.item-as-get', holds: 'an item equals the task as GET shows it in the same status (moves forward between the reads allowed)' },
} as const satisfies Record<string, CheckInfo>;
const C = LISTING_CHECKS;

/**
 * The list pages, walk by walk. `reads` are every read of every task, list items included.
 * @see reference "GET /v1/tasks (list)"
 */
export function checkListing(pages: readonly ListPageObservation[], reads: ReadonlyMap<string, readonly TaskRead[]>): Deviation[] {
  const found: Deviation[] = [];
  const walks = new Map<string, ListPageObservation[]>();
  for (const page of pages) walks.set(page.walk, [...(walks.get(page.walk) ?? []), page]);
  for (const walk of walks.values()) {
    walk.sort((a, b) => a.query.page - b.query.page);
    const began = walk[0]?.sentMs ?? 0;
    let previous: { page: ListPageObservation; items: TaskView[] } | null = null;
    let stable = walk[0]?.query.status === undefined;
    const seen = new Map<string, ListPageObservation>();
    for (const page of walk) {
      const items = page.items.map(viewTask).filter((v): v is TaskView => v !== null);
      found.push(...pageProblems(page, items, reads));
      stable &&= page.submitsIntervened !== true;
      for (const item of items) {
        const before = seen.get(item.id);
        if (before && stable) found.push({ check: C.noRepeat.id, message: `task ${item.id} is on page ${before.query.page} (${named(before)}) and page ${page.query.page} (${named(page)})`, requestIds: idsOf(before, page) });
        seen.set(item.id, page);
      }
      const last = previous?.items.at(-1);
      const next = items[0];
      if (previous && last && stable) {
        const where = `between page ${previous.page.query.page} (${named(previous.page)}) and page ${page.query.page} (${named(page)})`;
        found.push(...missing(reads, seen, { upper: timeMs(last.createdAt), lower: next ? timeMs(next.createdAt) : -Infinity, began, model: page.query.model }, where, [previous.page, page]));
      }
      if (previous && last && next) {
        const [a, b] = [timeMs(last.createdAt), timeMs(next.createdAt)];
        if (a !== null && b !== null && b > a) found.push({ check: C.newestFirst.id, message: `page ${page.query.page} (${named(page)}) starts with ${next.id}, newer than ${last.id} ending page ${previous.page.query.page} (${named(previous.page)})`, requestIds: idsOf(previous.page, page) });
      }
      previous = { page, items };
    }
    // The walk's end: nothing older than its last item may be left out.
    const end = walk.at(-1);
    if (end && previous && !end.has_more && stable) {
      const last = previous.items.at(-1);
      const where = `after the last page ${end.query.page} (${named(end)})`;
      found.push(...missing(reads, seen, { upper: last ? timeMs(last.createdAt) : Infinity, lower: -Infinity, began, model: end.query.model }, where, [end]));
    }
  }
  return found;
}

/**
 * Known tasks that the client had seen (its first read of the task answered) before the walk's first page went out,
 * created strictly between two creation times and of the filtered model, that no page of the walk held: each had
 * a place in it. "Before the walk" is judged on the client's clock, not from `created_at`: the server's clock may be
 * another (an emulator's virtual clock stalls or jumps; a real service's drifts), and a task submitted after the walk
 * carries no place in it.
 */
function missing(
  reads: ReadonlyMap<string, readonly TaskRead[]>,
  seen: ReadonlyMap<string, unknown>,
  span: { upper: number | null; lower: number | null; began: number; model: string | undefined },
  where: string,
  pages: ListPageObservation[],
): Deviation[] {
  const found: Deviation[] = [];
  const { upper, lower } = span;
  if (upper === null || lower === null) return found;
  for (const [id, taskReads] of reads) {
    const known = taskReads[0];
    const created = known ? timeMs(known.view.createdAt) : null;
    if (!known || created === null || seen.has(id) || known.obs.receivedMs > span.began) continue;
    if (created < upper && created > lower && (span.model === undefined || known.view.model === span.model)) {
      found.push({ check: C.noGap.id, message: `task ${id} (created ${String(known.view.createdAt)}, ${named(known.obs)}) is missing ${where}`, requestIds: idsOf(...pages, known.obs) });
    }
  }
  return found;
}

function pageProblems(page: ListPageObservation, items: readonly TaskView[], reads: ReadonlyMap<string, readonly TaskRead[]>): Deviation[] {
  const found: Deviation[] = [];
  const push = (check: CheckInfo, problem: string, ...others: TaskRead[]): void => {
    found.push({ check: check.id, message: `page ${page.query.page} (${named(page)}): ${problem}`, requestIds: idsOf(page, ...others.map((r) => r.obs)) });
  };
  if (page.items.length > page.query.limit) push(C.limit, `${page.items.length} items, limit ${page.query.limit}`);
  for (const [i, item] of items.entries()) {
    const prev = items[i - 1];
    const [a, b] = [prev ? timeMs(prev.createdAt) : null, timeMs(item.createdAt)];
    if (prev && a !== null && b !== null && b > a) push(C.newestFirst, `${item.id} (created ${String(item.createdAt)}) follows the older ${prev.id} (created ${String(prev.createdAt)})`);
    if (page.query.status !== undefined && item.status !== page.query.status) push(C.filter, `${item.id} is ${item.status}, the filter is status=${page.query.status}`);
    if (page.query.model !== undefined && item.model !== page.query.model) push(C.filter, `${item.id} is of model ${String(item.model)}, the filter is model=${page.query.model}`);
    // Within one status a task does not change: a GET in the item's status must show it field for field.
    for (const get of reads.get(item.id) ?? []) {
      if (get.obs.kind !== 'get' || get.view.status !== item.status) continue;
      if (!sameJson(get.view.raw, item.raw)) {
        const fields = Object.keys({ ...get.view.raw, ...item.raw }).filter((f) => !sameJson(get.view.raw[f], item.raw[f]));
        push(C.asGet, `${item.id} differs from GET ${named(get.obs)} in ${fields.join(', ')}`, get);
        break;
      }
    }
  }
  return found;
}
