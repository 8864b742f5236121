import { cmp } from '../points/index.ts';
import type { CheckInfo, Deviation, History, ListPageObservation, TaskObservation } from './history.ts';
import { idsOf, isRecord, named, readAfter, sameJson, timeMs, viewTask } from './task-view.ts';
import type { TaskRead, TaskView } from './task-view.ts';

export const CONSEQUENCE_CHECKS = {
  refusalBalance: {
    id: 'billing.refusal.changes-nothing',
    holds: 'a refused submission or cancel (402, 403, 404 model_unavailable, 409, 422, 429: any 4xx) leaves the account’s balance where it was',
  },
  createsNothing: {
    id: 'tasks.refusal.creates-nothing',
    holds: 'a refused submission (409 idempotency_conflict, 402, 403, 404, 422, 429: any 4xx) or an idempotent replay creates no task: no task that no submission was answered with and no read saw before it shows its model, input and metadata, created while it was under way',
  },
  leavesTasks: {
    id: 'tasks.refusal.leaves-tasks',
    holds: 'a refused cancel (409 task_not_cancelable) or a conflicting key (409 idempotency_conflict) leaves the task it names as it was: the same model, input and metadata on later reads, and not canceled unless a later cancel was answered 200',
  },
  cancelHeld: {
    id: 'tasks.cancel.held-to-reads',
    holds: 'a cancel answered 200 shows the task canceled with error.code canceled, and a first page of canceled tasks read after it holds the task unless the page is full and the task older than all its items (a later read in another status is lifecycle.status.forward-only’s)',
  },
  submitHeld: {
    id: 'tasks.submit.held-to-reads',
    holds: 'a task answered to a submission or a replay exists from then on: no query or cancel of it sent later is 404 not_found, and a first list page read later (no status filter) holds it unless the page is full and the task older than all its items',
  },
} as const satisfies Record<string, CheckInfo>;
const C = CONSEQUENCE_CHECKS;

const status = (obs: TaskObservation): number => obs.answer?.status ?? 200;
const refused = (obs: TaskObservation): boolean => status(obs) >= 400 && status(obs) < 500;
const answerOf = (obs: TaskObservation): string => `${status(obs)}${obs.answer?.code ? ` ${obs.answer.code}` : ''}`;
const accepted = (obs: TaskObservation): TaskView | null => (status(obs) === 200 ? viewTask(obs.task) : null);
const isSubmission = (obs: TaskObservation): boolean => obs.kind === 'submit' || obs.kind === 'replay';

/**
 * What each answer of the task endpoints says happened, held to what was observed after it: later reads of the
 * task, later list pages, and the account's balance read around it. `reads` are every read of each task but
 * idempotent replays (which may show the task as first answered), list items included.
 * @see reference "POST /v1/tasks" rules 1, 4 and 5, "POST /v1/tasks/{id}/cancel", "Errors" → "Codes" (requests
 *   refused by these errors create no task and charge nothing)
 */
export function checkConsequences(history: History, reads: ReadonlyMap<string, readonly TaskRead[]>, skewMs: number): Deviation[] {
  const tasks = history.tasks ?? [];
  const pages = firstPages(history.pages ?? []);
  return [...refusalBalance(tasks), ...createsNothing(tasks, reads, skewMs), ...leavesTasks(tasks, reads), ...cancelHeld(tasks, pages), ...submitHeld(tasks, pages)];
}

/** The balance read around a refusal did not move: nothing was frozen, charged or refunded by it. */
function refusalBalance(tasks: readonly TaskObservation[]): Deviation[] {
  const found: Deviation[] = [];
  for (const obs of tasks) {
    if (!obs.balance || !refused(obs) || obs.kind === 'get' || obs.kind === 'list-item') continue;
    const { before, after } = obs.balance;
    if (cmp(before, after) !== 0) {
      const what = obs.kind === 'cancel' ? `cancel of task ${obs.target ?? '?'}` : 'submission';
      found.push({ check: C.refusalBalance.id, message: `the balance went from ${before} to ${after} around a ${what} answered ${answerOf(obs)} (${named(obs)}), which changes nothing`, requestIds: idsOf(obs) });
    }
  }
  return found;
}

/**
 * A task the history has no submission answer for, first read after a refused submission (or a replay) and shaped
 * by what it sent: the refusal (or the replay) created it. Only tasks that could be its are looked at: the same
 * model, an input agreeing on every field both have, the metadata it sent, a created_at while it was under way
 * (whole seconds, give or take the clocks' skew), and unseen before it was sent.
 */
function createsNothing(tasks: readonly TaskObservation[], reads: ReadonlyMap<string, readonly TaskRead[]>, skewMs: number): Deviation[] {
  const found: Deviation[] = [];
  const answered = new Set(tasks.filter(isSubmission).map((o) => accepted(o)?.id).filter((id): id is string => id !== undefined));
  const unanswered = [...reads].filter(([id, r]) => !answered.has(id) && r.length > 0);
  if (unanswered.length === 0) return found;
  for (const obs of tasks) {
    const replay = obs.kind === 'replay' && status(obs) === 200;
    if (!obs.sent || typeof obs.sent.model !== 'string' || !(replay || (obs.kind === 'submit' && refused(obs)))) continue;
    for (const [id, taskReads] of unanswered) {
      const first = taskReads[0];
      const created = first ? timeMs(first.view.createdAt) : null;
      if (!first || created === null || created + 1000 <= obs.sentMs - skewMs || created > obs.receivedMs + skewMs) continue;
      if (taskReads.some((r) => r.obs.receivedMs <= obs.sentMs) || !shapedBy(obs.sent, first.view)) continue;
      const what = replay ? 'an idempotent replay' : `a submission answered ${answerOf(obs)}`;
      found.push({
        check: C.createsNothing.id,
        message: `task ${id} (created ${String(first.view.createdAt)}, read by ${named(first.obs)}) has the model, input and metadata of ${what} (${named(obs)}) and was created while it was under way; no submission was answered with it`,
        requestIds: idsOf(obs, first.obs),
      });
    }
  }
  return found;
}

/** The task could have been made of what was sent: its model, the sent metadata (when any), and agreeing input. */
function shapedBy(sent: NonNullable<TaskObservation['sent']>, view: TaskView): boolean {
  if (view.model !== sent.model) return false;
  const metadata = isRecord(sent.metadata) && Object.keys(sent.metadata).length > 0;
  if (metadata && !sameJson(sent.metadata, view.raw.metadata)) return false;
  if (!isRecord(sent.input) || !isRecord(view.input)) return metadata;
  const input = view.input;
  // Normalization fills defaults, drops fields and turns numeric strings into numbers; what both have agrees.
  const shared = Object.keys(sent.input).filter((k) => k in input);
  return shared.every((k) => agrees(sent.input as Record<string, unknown>, input, k)) && (shared.length > 0 || metadata);
}

function agrees(sent: Record<string, unknown>, task: Record<string, unknown>, key: string): boolean {
  const [a, b] = [sent[key], task[key]];
  return sameJson(a, b) || (typeof a === 'string' && typeof b === 'number' && a.trim() !== '' && Number(a) === b);
}

/** The task a 409 names: the cancel's, or the first task accepted under the conflicting key. */
function namedTask(obs: TaskObservation, tasks: readonly TaskObservation[]): string | null {
  if (status(obs) !== 409) return null;
  if (obs.answer?.code === 'task_not_cancelable' && obs.kind === 'cancel') return obs.target ?? null;
  if (obs.answer?.code !== 'idempotency_conflict' || !obs.key) return null;
  const key = obs.key.idempotencyKey;
  const owner = tasks.filter((o) => o.key?.idempotencyKey === key && o.sentMs < obs.sentMs && isSubmission(o) && accepted(o)).sort((a, b) => a.sentMs - b.sentMs)[0];
  return owner ? (accepted(owner)?.id ?? null) : null;
}

/** A 409 changed the task it refused to touch: what it is made of, or (a refused cancel) its status. */
function leavesTasks(tasks: readonly TaskObservation[], reads: ReadonlyMap<string, readonly TaskRead[]>): Deviation[] {
  const found: Deviation[] = [];
  for (const obs of tasks) {
    const id = namedTask(obs, tasks);
    const taskReads = id === null ? [] : (reads.get(id) ?? []);
    const before = taskReads.filter((r) => readAfter(obs, r.obs)).at(-1);
    if (id === null || !before) continue;
    const canceledSince = (r: TaskRead): boolean =>
      tasks.some((c) => c.kind === 'cancel' && c.sentMs >= obs.receivedMs && c.sentMs <= r.obs.sentMs && accepted(c)?.id === id);
    for (const r of taskReads.filter((t) => readAfter(t.obs, obs))) {
      const changed = (['model', 'input', 'metadata'] as const).filter((f) => !sameJson(before.view.raw[f], r.view.raw[f]));
      const canceled = obs.answer?.code === 'task_not_cancelable' && before.view.status !== 'canceled' && r.view.status === 'canceled' && !canceledSince(r);
      if (changed.length === 0 && !canceled) continue;
      const how = [...(changed.length > 0 ? [`${changed.join(', ')} changed`] : []), ...(canceled ? [`${before.view.status} became canceled with no cancel answered 200`] : [])].join(' and ');
      found.push({
        check: C.leavesTasks.id,
        message: `task ${id} was refused ${answerOf(obs)} (${named(obs)}), yet between ${named(before.obs)} and ${named(r.obs)} ${how}`,
        requestIds: idsOf(before.obs, obs, r.obs),
      });
      break;
    }
  }
  return found;
}

/**
 * A cancel answered 200 said the task is canceled: the answer shows it so, and so do the later first pages of the
 * canceled tasks. A later read of the task in another status is not judged here: the lifecycle's forward-only rule
 * already names both reads, and one deviation is reported once.
 */
function cancelHeld(tasks: readonly TaskObservation[], pages: readonly PageView[]): Deviation[] {
  const found: Deviation[] = [];
  for (const obs of tasks) {
    const view = obs.kind === 'cancel' ? accepted(obs) : null;
    if (!view) continue;
    // No error at all is the lifecycle's error rule's to report.
    const code = isRecord(view.error) ? view.error.code : 'canceled';
    if (view.status !== 'canceled' || code !== 'canceled') {
      found.push({ check: C.cancelHeld.id, message: `a cancel of task ${view.id} was answered 200 with the task ${view.status}${code === 'canceled' ? '' : `, error.code ${String(code)}`} (${named(obs)}): a cancel either cancels or is 409`, requestIds: idsOf(obs) });
      continue;
    }
    const missing = missingFrom(pages, obs, view, 'canceled');
    if (missing) {
      found.push({
        check: C.cancelHeld.id,
        message: `task ${view.id} (created ${String(view.createdAt)}) was answered canceled by its cancel (${named(obs)}) and is missing from the first page of canceled tasks read after it (${named(missing.page)}${last(missing.page) ? ', the last page' : ', newer than its oldest item'})`,
        requestIds: idsOf(obs, missing.page),
      });
    }
  }
  return found;
}

/** A first list page as these rules read it: which tasks it holds and its oldest creation time. */
interface PageView {
  page: ListPageObservation;
  ids: ReadonlySet<string>;
  oldestMs: number | null;
}

function firstPages(pages: readonly ListPageObservation[]): PageView[] {
  return pages
    .filter((p) => p.query.page === 1)
    .map((page) => {
      const items = page.items.map(viewTask).filter((v): v is TaskView => v !== null);
      const times = items.map((v) => timeMs(v.createdAt)).filter((t): t is number => t !== null);
      return { page, ids: new Set(items.map((v) => v.id)), oldestMs: times.length > 0 ? Math.min(...times) : null };
    });
}

/**
 * The first page read after `after` answered, of the tasks in `status` (undefined: of all), that should hold the
 * task and does not. Newest first: a task older than everything on a page with more after it is on a later page.
 */
function missingFrom(pages: readonly PageView[], after: TaskObservation, view: TaskView, status: string | undefined): PageView | undefined {
  const created = timeMs(view.createdAt);
  return pages.find(({ page, ids, oldestMs }) => {
    if (page.query.status !== status || !readAfter(page, after) || ids.has(view.id) || (page.query.model !== undefined && page.query.model !== view.model)) return false;
    return last(page) || (created !== null && oldestMs !== null && created > oldestMs);
  });
}

/**
 * The page is the last of its list: has_more false on a page not full. A full page "without more" may be a page
 * whose has_more is missing (read as false), which the document checks report; it is judged as any full page.
 */
function last(page: ListPageObservation): boolean {
  return !page.has_more && page.items.length < page.query.limit;
}

/** The task a submission (or replay) answered exists: later queries find it, and later first pages list it. */
function submitHeld(tasks: readonly TaskObservation[], pages: readonly PageView[]): Deviation[] {
  const found: Deviation[] = [];
  const notFound = new Map<string, TaskObservation[]>();
  for (const obs of tasks) {
    if ((obs.kind === 'get' || obs.kind === 'cancel') && obs.target && status(obs) === 404 && obs.answer?.code === 'not_found') notFound.set(obs.target, [...(notFound.get(obs.target) ?? []), obs]);
  }
  const done = new Set<string>();
  for (const obs of tasks) {
    const view = isSubmission(obs) ? accepted(obs) : null;
    if (!view || done.has(view.id)) continue;
    done.add(view.id);
    const what = obs.kind === 'replay' ? 'replay' : 'submission';
    const lost = (notFound.get(view.id) ?? []).find((g) => readAfter(g, obs));
    if (lost) {
      found.push({ check: C.submitHeld.id, message: `task ${view.id} was answered to a ${what} (${named(obs)}), then ${lost.kind === 'cancel' ? 'its cancel' : 'its query'} was answered 404 not_found (${named(lost)})`, requestIds: idsOf(obs, lost) });
    }
    const missing = missingFrom(pages, obs, view, undefined);
    if (missing) {
      found.push({
        check: C.submitHeld.id,
        message: `task ${view.id} (created ${String(view.createdAt)}) was answered to a ${what} (${named(obs)}) and is missing from the first list page read after it (${named(missing.page)}${last(missing.page) ? ', the last page' : ', newer than its oldest item'})`,
        requestIds: idsOf(obs, missing.page),
      });
    }
  }
  return found;
}
