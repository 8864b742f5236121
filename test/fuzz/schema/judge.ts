import { responseProblems } from '../../support/spec-check.ts';
import { isObject } from './document.ts';
import type { Operation } from './document.ts';
import type { HttpRequest } from './cases.ts';

/**
 * What an answer to a schema-valid request may not be: (a) a server error; (b) a refusal of the request
 * (400, 401, 403, 413, 415, 422, or any 4xx or mid-stream error whose code is a validation code); (c) unlike
 * the document (Prism's response validator, test/support/spec-check.ts); (d) without `X-Request-Id`. 402 and
 * 429 are limits the setup means to avoid: counted apart, never findings.
 */
export type FindingKind =
  | 'server error'
  | 'rejected a schema-valid request'
  | 'answer does not match the document'
  | 'no X-Request-Id'
  | 'no answer';

export interface Answer {
  status: number;
  headers: Record<string, string>;
  text: string;
  /** Parsed JSON when the answer is JSON, else the text. */
  body: unknown;
}

export interface Finding {
  kind: FindingKind;
  operation: string;
  status: number;
  code: string | null;
  curl: string;
  body: string;
  detail: string;
  /** What findings of the same kind share to count as one: the fields an error names, or its words. */
  gist: string;
}

/**
 * Refusals of the request itself. 401 and 403 are among them: the key is live, unsigned and may call every
 * model, and is sent the way one of the operation's security alternatives says.
 */
const REFUSAL_STATUSES = new Set([400, 401, 403, 413, 415, 422]);
const VALIDATION_CODES = new Set(['invalid_params', 'bad_request', 'invalid_request_error', 'unsupported_media_type', 'payload_too_large']);
const LIMIT_STATUSES = new Set([402, 429]);
const EXCERPT = 600;

/** The error code of an error body in any of the three shapes (`error.code`, or `error.type`). */
export function errorCode(body: unknown): string | null {
  const error = isObject(body) ? body['error'] : undefined;
  if (!isObject(error)) return null;
  const code = error['code'] ?? error['type'];
  return typeof code === 'string' ? code : null;
}

/** The fields an error's details name (array positions dropped), or its message without the values it quotes. */
function errorGist(body: unknown, fallback: string): string {
  const error = isObject(body) ? body['error'] : undefined;
  const details = isObject(error) && Array.isArray(error['details']) ? (error['details'] as unknown[]).filter(isObject) : [];
  if (details.length > 0) return [...new Set(details.map((d) => String(d['field']).replace(/\[\d+\]/g, '[]')))].sort().join(',');
  return withoutValues(isObject(error) ? String(error['message'] ?? '') : fallback);
}

const withoutValues = (text: string): string => text.replace(/'.*'|".*"|\d+(\.\d+)?/g, '…').slice(0, 200);

function errorText(body: unknown): string {
  const error = isObject(body) ? body['error'] : undefined;
  if (!isObject(error)) return '';
  const details = Array.isArray(error['details'])
    ? (error['details'] as unknown[]).filter(isObject).map((d) => `${String(d['field'])}: ${String(d['message'])}`)
    : [];
  return [String(error['message'] ?? ''), ...details].filter(Boolean).join('; ');
}

/** The JSON objects of an event stream's `data:` lines. */
export function streamEvents(text: string): unknown[] {
  return text
    .split(/\r?\n/)
    .filter((line) => line.startsWith('data:'))
    .flatMap((line) => {
      try {
        return [JSON.parse(line.slice(5).trim()) as unknown];
      } catch {
        return [];
      }
    });
}

export function judge(op: Operation, request: HttpRequest, answer: Answer): { findings: Finding[]; limited: boolean } {
  const code = errorCode(answer.body);
  const findings: Finding[] = [];
  const found = (kind: FindingKind, detail: string, gist: string, findingCode = code): void => {
    findings.push({ kind, operation: op.id, status: answer.status, code: findingCode, curl: request.curl, body: answer.text.slice(0, EXCERPT), detail, gist });
  };
  if (answer.status >= 500) found('server error', errorText(answer.body) || answer.text.slice(0, 200), errorGist(answer.body, answer.text));
  else if (REFUSAL_STATUSES.has(answer.status) || (answer.status >= 400 && answer.status < 500 && code !== null && VALIDATION_CODES.has(code))) {
    found('rejected a schema-valid request', errorText(answer.body), errorGist(answer.body, answer.text));
  }
  if ((answer.headers['content-type'] ?? '').startsWith('text/event-stream')) {
    for (const event of streamEvents(answer.text)) {
      const eventCode = errorCode(event);
      if (eventCode !== null && VALIDATION_CODES.has(eventCode)) {
        found('rejected a schema-valid request', `mid-stream error event: ${errorText(event)}`, `stream:${errorGist(event, '')}`, eventCode);
        break;
      }
    }
  }
  const problems = responseProblems('service', request.method, request.target, answer);
  if (problems.length > 0) found('answer does not match the document', problems.join('; '), withoutValues(problems.join('; ')));
  if (!answer.headers['x-request-id']) found('no X-Request-Id', 'the answer has no X-Request-Id header', '');
  return { findings, limited: LIMIT_STATUSES.has(answer.status) };
}

/** A finding that could not even get an answer (a dropped connection, a timeout). */
export function noAnswer(op: Operation, request: HttpRequest, error: unknown): Finding {
  const cause = (error as { cause?: { code?: string } }).cause?.code;
  return { kind: 'no answer', operation: op.id, status: 0, code: null, curl: request.curl, body: '', detail: `${String(error)}${cause ? ` (${cause})` : ''}`, gist: cause ?? String(error) };
}
