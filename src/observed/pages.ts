import type { CheckInfo, Deviation, ListPageObservation, TaskObservation } from './history.ts';
import { idsOf, named, timeMs, viewTask } from './task-view.ts';
import type { TaskView } from './task-view.ts';

export const PAGE_CHECKS = {
  sameSecond: {
    id: 'tasks.list.newest-first.same-second',
    holds: 'tasks created in the same second are listed newest first too, newest as the client knows it (one’s submission answered before the other’s was sent), down a page and across the pages of a walk',
  },
  noSkip: {
    id: 'tasks.list.no-skip',
    holds: 'no task the client submitted before a page was read is missing from its place: within the page (or above page 1’s first item), told by created_at or, within one second, by the order of submission; and, for tasks of one second, between the pages of a walk without submits in between and after its last page (no status filter)',
  },
} as const satisfies Record<string, CheckInfo>;
const C = PAGE_CHECKS;

/** The client's accepted submission of each task: one answered before another was sent is the older task. */
type Submitted = ReadonlyMap<string, { obs: TaskObservation; view: TaskView }>;

/** How two tasks are ordered by creation as far as the client can tell, and whether created_at alone says so. */
type Order = { newer: boolean; byTime: boolean } | null;
type Compare = (x: TaskView, y: TaskView) => Order;

/** One page of a walk as these rules read it. */
interface Read {
  page: ListPageObservation;
  items: TaskView[];
  /** No submits since the walk began and no status filter: the pages are of one list. */
  stable: boolean;
}

/**
 * The order of each walk's items against the tasks the client submitted: created_at first and, within one second,
 * the order the client's submissions were answered in (the listing rules judge created_at alone).
 * @see reference "GET /v1/tasks (list)": newest first; "When has_more is true, request page + 1"
 */
export function checkPages(pages: readonly ListPageObservation[], tasks: readonly TaskObservation[]): Deviation[] {
  const submitted = submissions(tasks);
  const order: Compare = (x, y) => compare(x, y, submitted);
  const walks = new Map<string, ListPageObservation[]>();
  for (const page of pages) walks.set(page.walk, [...(walks.get(page.walk) ?? []), page]);
  return [...walks.values()].flatMap((walk) => {
    walk.sort((a, b) => a.query.page - b.query.page);
    let stable = walk[0]?.query.status === undefined;
    const reads = walk.map((page): Read => {
      stable &&= page.submitsIntervened !== true;
      return { page, items: page.items.map(viewTask).filter((v): v is TaskView => v !== null), stable };
    });
    return [...orderProblems(reads, order, submitted), ...skipProblems(reads, order, submitted)];
  });
}

/** An older task listed above a newer one of the same second: once per item, naming the first older one above it. */
function orderProblems(reads: readonly Read[], order: Compare, submitted: Submitted): Deviation[] {
  const found: Deviation[] = [];
  const listed: { item: TaskView; page: ListPageObservation }[] = [];
  const submit = (id: string): TaskObservation | undefined => submitted.get(id)?.obs;
  for (const { page, items } of reads) {
    for (const item of items) {
      const older = listed.find((l) => {
        const o = l.item.id === item.id ? null : order(l.item, item);
        return o?.newer === false && !o.byTime;
      });
      if (older) {
        found.push({
          check: C.sameSecond.id,
          message: `${item.id} (${named(submit(item.id) ?? { requestId: null })}) is listed on page ${page.query.page} (${named(page)}) below ${older.item.id}, submitted before it (${named(submit(older.item.id) ?? { requestId: null })}), both created ${String(item.createdAt)}`,
          requestIds: idsOf(older.page, page, ...[older.item.id, item.id].flatMap((id) => submit(id) ?? [])),
        });
      }
      listed.push({ item, page });
    }
  }
  return found;
}

/**
 * Submitted tasks missing from their place: within a page, above page 1's first item, between the pages and after
 * the last. What the consequences rules judge of page 1 (a task of the same second as its oldest item aside, when
 * more pages follow) and the listing rules of created_at alone between the pages is left to them.
 */
function skipProblems(reads: readonly Read[], order: Compare, submitted: Submitted): Deviation[] {
  const found: Deviation[] = [];
  // A task listed anywhere in the walk is not missing: one out of its place breaks the order rules instead.
  const seen = new Set(reads.flatMap((r) => r.items.map((v) => v.id)));
  const began = reads[0]?.page.sentMs ?? 0;
  const newer = (...orders: Order[]): boolean => orders.every((o) => o?.newer === true);
  const tieBroken = (...orders: Order[]): boolean => newer(...orders) && orders.some((o) => o?.byTime === false);
  for (const [n, { page, items, stable }] of reads.entries()) {
    if (page.query.status !== undefined) continue;
    /** Submitted tasks known before `at` (the client's clock) that `belongs` places `where`. */
    const missing = (at: number, belongs: (k: TaskView) => boolean, where: string, involved: ListPageObservation[]): void => {
      for (const [id, { obs, view }] of submitted) {
        if (seen.has(id) || obs.receivedMs > at || (page.query.model !== undefined && view.model !== page.query.model) || !belongs(view)) continue;
        found.push({ check: C.noSkip.id, message: `task ${id} (created ${String(view.createdAt)}, ${named(obs)}) is missing ${where}`, requestIds: idsOf(...involved, obs) });
      }
    };
    // Within a page, and above page 1's first item: one page is one reading of the list.
    const times = items.map((v) => timeMs(v.createdAt)).filter((t): t is number => t !== null);
    const oldest = times.length > 0 ? Math.min(...times) : null;
    const judged = (k: TaskView): boolean => page.query.page > 1 || (page.has_more && timeMs(k.createdAt) === oldest);
    for (const [i, item] of items.entries()) {
      const above = items[i - 1];
      if (!above && page.query.page !== 1) continue;
      const where = above ? `between ${above.id} and ${item.id} on page ${page.query.page} (${named(page)})` : `above ${item.id}, the first of page 1 (${named(page)})`;
      missing(page.sentMs, (k) => judged(k) && (above === undefined || newer(order(above, k))) && newer(order(k, item)), where, [page]);
    }
    // Between the pages and after the last: of tasks known before the walk began.
    const before = reads[n - 1];
    const [last, first] = [before?.items.at(-1), items[0]];
    if (stable && before && last && first && before.page.query.page === page.query.page - 1) {
      missing(began, (k) => tieBroken(order(last, k), order(k, first)), `between page ${before.page.query.page} (${named(before.page)}) and page ${page.query.page} (${named(page)})`, [before.page, page]);
    }
    const end = items.at(-1) ?? before?.items.at(-1);
    if (stable && !page.has_more && n === reads.length - 1 && page.query.page > 1 && end) {
      missing(began, (k) => tieBroken(order(end, k)), `after ${end.id}, the last of the last page ${page.query.page} (${named(page)})`, [page]);
    }
  }
  return found;
}

function submissions(tasks: readonly TaskObservation[]): Submitted {
  const submitted = new Map<string, { obs: TaskObservation; view: TaskView }>();
  for (const obs of tasks) {
    if (obs.kind !== 'submit' || (obs.answer?.status ?? 200) !== 200) continue;
    const view = viewTask(obs.task);
    if (view && !submitted.has(view.id)) submitted.set(view.id, { obs, view });
  }
  return submitted;
}

/** `x` against `y`: newer or older by created_at, or within one second by the order of their submissions; null when unknown. */
function compare(x: TaskView, y: TaskView, submitted: Submitted): Order {
  const [cx, cy] = [timeMs(x.createdAt), timeMs(y.createdAt)];
  if (cx === null || cy === null) return null;
  if (cx !== cy) return { newer: cx > cy, byTime: true };
  const [sx, sy] = [submitted.get(x.id)?.obs, submitted.get(y.id)?.obs];
  if (!sx || !sy) return null;
  if (sy.receivedMs <= sx.sentMs) return { newer: true, byTime: false };
  if (sx.receivedMs <= sy.sentMs) return { newer: false, byTime: false };
  return null;
}
