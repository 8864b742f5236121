import type { StoredTask, TaskAnswer, TasksRepo } from './records.ts';
import { ApiError } from '../errors/index.ts';
import type { Task, TaskStatus } from './task.ts';

/** A task of this account; any other (or none) is 404 not_found. @see reference "GET /v1/tasks/{id}" */
export function findTask(db: { tasks: TasksRepo }, accountId: string, id: string): StoredTask {
  const stored = db.tasks.get(id);
  if (!stored || stored.account_id !== accountId) throw notFound(id);
  return stored;
}

/** `findTask` for a read that changes nothing: the task frozen, and its JSON made once per version. */
export function findTaskAnswer(db: { tasks: TasksRepo }, accountId: string, id: string): TaskAnswer {
  const answer = db.tasks.answer(id);
  if (!answer || answer.stored.account_id !== accountId) throw notFound(id);
  return answer;
}

const notFound = (id: string): ApiError => new ApiError('not_found', `No task '${id}' in this account.`);

export interface ListQuery {
  status?: TaskStatus;
  model?: string;
  limit: number;
  page: number;
}

export interface TaskPage {
  object: 'list';
  data: Task[];
  page: number;
  limit: number;
  has_more: boolean;
}

/** Newest first, filtered, one page (an index gives it, however many tasks are stored). @see reference "GET /v1/tasks (list)" */
export function listTasks(db: { tasks: TasksRepo }, accountId: string, query: ListQuery): TaskPage {
  const { rows, hasMore } = db.tasks.page(
    {
      accountId,
      ...(query.status !== undefined ? { status: query.status } : {}),
      ...(query.model !== undefined ? { model: query.model } : {}),
    },
    query.limit,
    (query.page - 1) * query.limit,
  );
  return { object: 'list', data: rows.map((t) => t.task), page: query.page, limit: query.limit, has_more: hasMore };
}
