import { ANSWER_CHECKS, formatDeviations, genericDeviations, STREAM_ORDER_CHECKS, streamFormatOf, streamOrderProblems, streamRequestOf } from '../conformance/index.ts';
import type { AnswerDeviation, ResponseContract } from '../conformance/index.ts';
import { CHECKS } from '../observed/index.ts';
import type { Deviation as ObservedDeviation } from '../observed/index.ts';
import { curlOf, parseJson, redactSecrets } from '../wire/index.ts';
import type { Exchange } from '../wire/index.ts';
import type { UpstreamTimeout } from './upstream-failure.ts';
import { CALLBACK_DEADLINE_CHECK } from './callback-deadlines.ts';
import type { Overdue } from './callback-deadlines.ts';

/** One answer of the upstream that departs from the contract, as the proxy lists and logs it. */
export interface Deviation {
  check: string;
  method: string;
  path: string;
  status: number;
  request_id: string | null;
  message: string;
  curl: string;
  /** The requests the deviation rests on, for a rule across exchanges (the shared checker's); oldest first. */
  request_ids?: string[];
}

/** When the proxy saw an exchange, in machine ms: the request's arrival and the answer's headers. */
export interface ExchangeTimes {
  startedMs: number;
  firstByteMs: number;
}

/** An upstream that sent no status line within the proxy's upstream timeout (the proxy answered 504 itself). */
export const UPSTREAM_TIMEOUT_CHECK = 'wire.upstream.timeout';

/**
 * The rules of observed behaviour the proxy reports: all of the shared checker's, but for those an answer's own
 * checks already make on every answer (task times with +08:00), which would say the same thing twice.
 */
export const OBSERVED_CHECKS: readonly string[] = CHECKS.map((c) => c.id).filter((id) => !ANSWER_CHECKS.includes(id));

/** Every check the proxy runs, in the order it runs them: a report has a case for each, failing or not. */
export const PROXY_CHECKS: readonly string[] = [...ANSWER_CHECKS, ...Object.values(STREAM_ORDER_CHECKS), ...OBSERVED_CHECKS, UPSTREAM_TIMEOUT_CHECK, CALLBACK_DEADLINE_CHECK];

/** What the proxy's checks find: an answer's deviation, or one of the shared checker's with its requests. */
type Found = AnswerDeviation & { requestIds?: string[] };

/**
 * A non-streamed text call answered 503 `service_unavailable` in its endpoint's error shape: the documented answer
 * of a service fault part-way through generation (the whole answer is refunded), not a server error.
 * @see reference "Text billing" 5, "Errors" → "Body formats"; openapi/service.yaml lists 503 for the text endpoints
 */
function documentedUnavailable(exchange: Exchange): boolean {
  const format = streamFormatOf(exchange.path.split('?')[0] ?? '');
  if (exchange.method !== 'POST' || format === null || exchange.status !== 503) return false;
  const sent = parseJson(exchange.requestBody ?? '') as { stream?: unknown } | undefined;
  if (sent?.stream === true) return false;
  const body = exchange.json as { type?: unknown; error?: { code?: unknown; type?: unknown } } | undefined;
  const error = body?.error;
  if (error?.code !== 'service_unavailable' || error.type !== 'service_unavailable') return false;
  return format === 'messages' ? body?.type === 'error' : true;
}

/**
 * The conformance suite's checks of any answer, all of them rather than the first (the proxy reports, it does not
 * stop), plus the value formats, and the event order of a text stream. An answer whose body could not be read is
 * checked on status and headers only.
 */
function answerDeviations(contract: ResponseContract, exchange: Exchange, complete: boolean): AnswerDeviation[] {
  const found = genericDeviations(contract, exchange).filter((d) => !(d.check === 'wire.status.no-5xx' && documentedUnavailable(exchange)));
  if (!complete) return found.filter((d) => d.check !== 'wire.schema.response');
  const format = streamFormatOf(exchange.path);
  const streamed = format !== null && exchange.status >= 200 && exchange.status < 300 && (exchange.headers.get('content-type') ?? '').startsWith('text/event-stream');
  // Any answer passes through, an empty one included: a stream without a content delta keeps the order.
  const order = streamed ? streamOrderProblems(format, exchange.events, { ...streamRequestOf(format, exchange.requestBody), emptyAllowed: true }) : [];
  return [...found, ...formatDeviations(exchange), ...order];
}

/** The shared checker's deviations, as the proxy reports them. */
export const observedFound = (found: readonly ObservedDeviation[]): Found[] =>
  found.filter((d) => OBSERVED_CHECKS.includes(d.check)).map((d) => ({ check: d.check, message: d.message, requestIds: d.requestIds }));

/**
 * The proxy's checks of one exchange that has ended: the answer alone, then `across`, what the shared checker
 * found new in the account's history once this exchange joined it.
 */
export function exchangeDeviations(contract: ResponseContract, upstream: string, exchange: Exchange, complete: boolean, across: readonly ObservedDeviation[]): Deviation[] {
  return reported([...answerDeviations(contract, exchange, complete), ...observedFound(across)], exchange, upstream);
}

/**
 * A request the upstream did not answer in time, as a deviation of the upstream: `exchange` holds the request and
 * the proxy's own 504 with its request id, and its curl line asks the upstream again.
 */
export const timeoutDeviation = (exchange: Exchange, upstream: string, timeout: UpstreamTimeout): Deviation[] =>
  reported([{ check: UPSTREAM_TIMEOUT_CHECK, message: timeout.message }], exchange, upstream);

/**
 * What the shared checker found once a callback joined the history: `delivery` is the callback as the proxy passed
 * it on to `receiver` (its request, with no path of its own, and the receiver's answer). A deviation names the
 * receiver's address (secret-looking parts hidden) where an exchange names its path, and its curl line sends the
 * callback to the receiver again.
 */
export const callbackDeviations = (found: readonly ObservedDeviation[], delivery: Exchange, receiver: string): Deviation[] =>
  reported(observedFound(found), delivery, receiver).map((d) => ({ ...d, path: redactSecrets(receiver).text }));

/**
 * Relayed tasks whose callback had not come `windowMs` of the deployment's clock after a read showed them terminal:
 * each named by that read (its request id and curl line), the upstream's deviation.
 */
export const overdueDeviations = (overdue: readonly Overdue[], upstream: string, windowMs: number): Deviation[] =>
  overdue.flatMap((o) =>
    reported(
      [{ check: CALLBACK_DEADLINE_CHECK, message: `task ${o.taskId} was read ${o.status} and no callback for it came through the proxy within ${windowMs / 1000} s of the deployment's clock`, requestIds: o.seen.requestId ? [o.seen.requestId] : [] }],
      o.seen,
      upstream,
    ),
  );

function reported(found: Found[], exchange: Exchange, upstream: string): Deviation[] {
  if (found.length === 0) return [];
  const curl = curlOf(upstream, exchange);
  return found.map((d) => ({
    check: d.check,
    method: exchange.method,
    path: exchange.path,
    status: exchange.status,
    request_id: exchange.requestId,
    message: d.actual === undefined ? d.message : `${d.message} (expected ${show(d.expected)}, got ${show(d.actual)})`,
    curl,
    ...(d.requestIds ? { request_ids: d.requestIds } : {}),
  }));
}

const show = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value) ?? 'nothing');

/** The one stderr line of a deviation. */
export const deviationLine = (d: Deviation): string => `deviation ${d.check} ${d.method} ${d.path} ${d.status} ${d.request_id ?? '-'}: ${d.message}`;
