import type { ApiDeps } from './deps.ts';
import { filesApi } from './files.ts';
import { tasksApi } from './tasks.ts';
import { textApi } from './text.ts';

/**
 * The decisions of /v1, implemented once: which scenario a task or text call follows, when it is scheduled,
 * which fault a text call meets and what is charged when it ends, faults and disconnects included. Routes parse
 * the request, call one of these and answer.
 */
export function createApi(deps: ApiDeps) {
  return { ...tasksApi(deps), ...textApi(deps), ...filesApi(deps) };
}

export type Api = ReturnType<typeof createApi>;
export type { ApiDeps, Caller } from './deps.ts';
export type { SubmitRequest } from './tasks.ts';
export type { Upload } from './files.ts';
export { MAX_UPLOAD_BYTES } from './files.ts';
export type { StreamStep, TextRequest, TextRun } from './text.ts';
