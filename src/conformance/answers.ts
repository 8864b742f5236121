import { ERROR_CATALOG } from '../errors/index.ts';
import { errorOf, POINTS, REQUEST_ID } from '../wire/index.ts';
import type { Exchange } from '../wire/index.ts';
import type { ResponseContract } from './spec.ts';

/** One way an answer departs from the contract, under the id of the check it belongs to. */
export interface AnswerDeviation {
  check: string;
  message: string;
  expected?: unknown;
  actual?: unknown;
}

/** The checks genericDeviations and formatDeviations report under, in the order they run. */
export const ANSWER_CHECKS = ['wire.status.no-5xx', 'wire.request-id.every-answer', 'wire.schema.response', 'wire.error-shape.body', 'wire.error-code.status', 'wire.points.decimal', 'wire.time.beijing'];

const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?\+08:00$/;

/**
 * What the suite checks on every answer, in the order it checks them (the suite stops at the first): no 5xx, an
 * X-Request-Id of the documented form, the answer as the document says, error.request_id equal to the header.
 */
export function genericDeviations(contract: ResponseContract, exchange: Exchange): AnswerDeviation[] {
  const found: AnswerDeviation[] = [];
  if (exchange.status >= 500) found.push({ check: 'wire.status.no-5xx', message: `answered ${exchange.status}`, expected: 'no 5xx', actual: exchange.status });
  if (!REQUEST_ID.test(exchange.requestId ?? '')) {
    found.push({ check: 'wire.request-id.every-answer', message: 'X-Request-Id missing or malformed', expected: 'req_ + 24 lowercase letters or digits', actual: exchange.requestId });
  }
  const body = exchange.json ?? (exchange.events.length > 0 ? exchange.text : undefined);
  const problems = contract.problems(exchange.method, exchange.path, { status: exchange.status, headers: exchange.headers, body });
  if (problems.length > 0) found.push({ check: 'wire.schema.response', message: `answer does not match the document: ${problems.join('; ')}` });
  const error = (exchange.json as { error?: { request_id?: unknown } } | undefined)?.error;
  if (exchange.status >= 400 && error && error.request_id !== exchange.requestId) {
    found.push({ check: 'wire.request-id.every-answer', message: 'error.request_id differs from X-Request-Id', expected: exchange.requestId, actual: error.request_id });
  }
  return found;
}

/**
 * Checks of an answer's values the suite makes inside its own checks, for answers it did not ask for (a proxy's):
 * an error in one of the three error shapes, points as three-decimal strings, times with +08:00.
 */
export function formatDeviations(exchange: Exchange): AnswerDeviation[] {
  const found: AnswerDeviation[] = [];
  const { code } = errorOf(exchange);
  if (exchange.status >= 400 && code === undefined) {
    found.push({ check: 'wire.error-shape.body', message: 'error answer without error.code (or error.type)', expected: '{error: {code, message, ...}}', actual: exchange.text.slice(0, 200) });
  }
  // The reference's list of codes is not complete, so an unknown code passes; a listed one has its status.
  const listed = code === undefined ? undefined : documentedStatus(code);
  if (exchange.status >= 400 && listed !== undefined && listed !== exchange.status) {
    found.push({ check: 'wire.error-code.status', message: `error code ${String(code)} answered with HTTP ${exchange.status}`, expected: listed, actual: exchange.status });
  }
  walk(exchange.json, '', (path, key, value, inPoints) => {
    if ((key === 'points' || inPoints) && (typeof value !== 'object' || value === null)) {
      if (typeof value !== 'string' || !POINTS.test(value)) found.push({ check: 'wire.points.decimal', message: `${path} is not a string with three decimals`, expected: 'd.ddd', actual: value });
    }
    // Only strings: the OpenAI-style bodies carry created/created_at as Unix seconds, as documented.
    if ((key.endsWith('_at') || key === 'timestamp') && typeof value === 'string' && !TIME.test(value)) {
      found.push({ check: 'wire.time.beijing', message: `${path} is not ISO 8601 with +08:00`, expected: 'YYYY-MM-DDTHH:MM:SS+08:00', actual: value });
    }
  });
  return found;
}

/**
 * Codes the reference names without an HTTP status: `service_unavailable` is a task failure reason and a
 * mid-stream error code only, so the catalog's 503 for it is the emulator's choice, not the service's.
 */
const STATUS_NOT_SHOWN = new Set(['service_unavailable']);

/** The HTTP status the reference's "Codes" table gives an error code, or undefined for a code it gives none. */
function documentedStatus(code: string): number | undefined {
  if (STATUS_NOT_SHOWN.has(code)) return undefined;
  const entry = (ERROR_CATALOG as Record<string, { status: number; emulatorDefined?: true }>)[code];
  return entry && !entry.emulatorDefined ? entry.status : undefined;
}

function walk(node: unknown, path: string, visit: (path: string, key: string, value: unknown, inPoints: boolean) => void, inPoints = false): void {
  if (typeof node !== 'object' || node === null) return;
  for (const [key, value] of Object.entries(node)) {
    const at = Array.isArray(node) ? `${path}[${key}]` : path === '' ? key : `${path}.${key}`;
    visit(at, key, value, inPoints);
    walk(value, at, visit, key === 'points');
  }
}
