import { ApiError } from '../errors/index.ts';
import type { StoreData, StoredTask } from '../store/index.ts';
import { entry } from '../store/index.ts';
import type { Task, TaskStatus } from './task.ts';

/** A task of this account; any other (or none) is 404 not_found. @see reference "GET /v1/tasks/{id}" */
export function findTask(data: StoreData, accountId: string, id: string): StoredTask {
  const stored = entry(data.tasks, id);
  if (!stored || stored.account_id !== accountId) throw new ApiError('not_found', `No task '${id}' in this account.`);
  return stored;
}

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

/** Newest first, filtered, one page. @see reference "GET /v1/tasks (list)" */
export function listTasks(data: StoreData, accountId: string, query: ListQuery): TaskPage {
  const matching = Object.values(data.tasks)
    .filter(
      (t) =>
        t.account_id === accountId &&
        (query.status === undefined || t.task.status === query.status) &&
        (query.model === undefined || t.task.model === query.model),
    )
    .sort((a, b) => b.seq - a.seq);
  const start = (query.page - 1) * query.limit;
  return {
    object: 'list',
    data: matching.slice(start, start + query.limit).map((t) => t.task),
    page: query.page,
    limit: query.limit,
    has_more: matching.length > start + query.limit,
  };
}
