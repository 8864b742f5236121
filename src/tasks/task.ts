import type { TaskStatus } from '../contract/index.ts';

export type { FileRecord, Task, TaskFailureCode, TaskOutput, TaskStatus } from '../contract/index.ts';

export const TERMINAL: ReadonlySet<TaskStatus> = new Set(['succeeded', 'failed', 'canceled']);
