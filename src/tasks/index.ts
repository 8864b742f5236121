export { submitTask } from './submit.ts';
export type { SubmitContext, SubmitResult } from './submit.ts';
export { findTask, listTasks, cancelTask } from './queries.ts';
export type { ListQuery, TaskPage } from './queries.ts';
export { TERMINAL } from './task.ts';
export type { Task, TaskStatus, TaskFailureCode, TaskOutput, FileRecord } from './task.ts';
export { fingerprint } from './fingerprint.ts';
