import type { TextFormat } from './history.ts';
import { isRecord } from './task-view.ts';

/** The codes a stream may end with in its error event. @see reference "Streaming" */
export const STREAM_ERROR_CODES: readonly string[] = ['service_unavailable', 'content_rejected', 'invalid_params'];

/**
 * How a stream's error event departs from its format's error body, or null when it keeps it. Chat and Responses:
 * `{error: {message, type, code, param, request_id}}`, type and code both the string code, param present (it may be
 * null); Messages: `{type: 'error', error: {type, message, code, request_id}}`, type and code alike; request_id is
 * the answer's X-Request-Id (`requestId`, when it had one).
 * The suite's checks of a stream cut by an error and the rule over every stream seen share it.
 * @see reference "Streaming" (an error in mid-stream), "Errors" → "Body formats"
 */
export function streamErrorProblem(format: TextFormat, data: unknown, requestId: string | null): string | null {
  if (!isRecord(data)) return `the error event's data is not a JSON object: ${show(data)}`;
  const error = data.error;
  if (!isRecord(error)) return `the error event has no error object: ${show(data)}`;
  if (format === 'messages' && data.type !== 'error') return `the error event's type is ${show(data.type)}, not "error"`;
  // Which codes a stream may end with is the event order's to judge (src/conformance/stream-order.ts), for every
  // stream the suite or the proxy sees: here only that there is one.
  const code = error.code;
  if (typeof code !== 'string' || code === '') return `error.code ${show(code)} is no code`;
  if (error.type !== code) return `error.type ${show(error.type)} is not the code ${code}`;
  if (typeof error.message !== 'string' || error.message === '') return `error.message ${show(error.message)} says nothing`;
  if (format !== 'messages' && !(error.param === null || typeof error.param === 'string')) return `error.param ${show(error.param)} is neither null nor a field name`;
  if (typeof error.request_id !== 'string') return `error.request_id ${show(error.request_id)} is not the answer's request id`;
  if (requestId !== null && error.request_id !== requestId) return `error.request_id ${error.request_id} is not the answer's X-Request-Id ${requestId}`;
  return null;
}

const show = (value: unknown): string => (value === undefined ? 'missing' : (JSON.stringify(value) ?? String(value)).slice(0, 200));
