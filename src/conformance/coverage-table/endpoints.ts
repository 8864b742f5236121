// The names the coverage table gives what a check or rule exercises: an operation of openapi/service.yaml as its
// `paths` write it, a callback as its `webhooks` name it, or the address of a file record (the reference gives it
// as a URL, under no path of the document). test/conformance/coverage.test.ts holds each to the document.

/** `POST /v1/tasks`; `callback task.failed`; `GET {file url}`. */
export type Endpoint = `${'GET' | 'POST'} /v1/${string}` | `callback ${string}` | typeof FILE_URL;

export const SUBMIT = 'POST /v1/tasks';
export const GET = 'GET /v1/tasks/{id}';
export const LIST = 'GET /v1/tasks';
export const CANCEL = 'POST /v1/tasks/{id}/cancel';
export const UPLOAD = 'POST /v1/files';
export const CHAT = 'POST /v1/chat/completions';
export const RESPONSES = 'POST /v1/responses';
export const MESSAGES = 'POST /v1/messages';
/** A file record's `url` (or `cover_url`), fetched without a key as any holder of the address would. */
export const FILE_URL = 'GET {file url}';
export const SUCCEEDED = 'callback task.succeeded';
export const FAILED = 'callback task.failed';
export const CANCELED = 'callback task.canceled';

/** Every answer that shows a task: the rules of a task's life read them all alike. */
export const TASK_ANSWERS: readonly Endpoint[] = [SUBMIT, GET, LIST, CANCEL];
export const TEXT: readonly Endpoint[] = [CHAT, RESPONSES, MESSAGES];
export const CALLBACKS: readonly Endpoint[] = [SUCCEEDED, FAILED, CANCELED];

/** What the table says of one check beside its own fields: what it exercises, in a few words. */
export interface CheckMeta {
  endpoints: readonly Endpoint[];
  behaviour: string;
}

/**
 * What it says of one rule of behaviour: the same, and whether the suite feeds it only through the emulator's
 * control API (a check's own `needs` says so for a check).
 */
export interface RuleMeta extends CheckMeta {
  control?: true;
}
