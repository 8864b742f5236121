import { ANSWER_CHECKS, formatDeviations, genericDeviations } from '../conformance/answers.ts';
import type { AnswerDeviation } from '../conformance/answers.ts';
import { curlOf } from '../wire/index.ts';
import type { Exchange } from '../wire/index.ts';
import type { ResponseContract } from '../conformance/spec.ts';
import { STREAM_ORDER_CHECKS, streamFormatOf, streamOrderProblems, streamRequestOf } from '../conformance/stream-order.ts';
import { createTaskRules, TASK_CHECKS } from './task-rules.ts';
import type { UpstreamTimeout } from './upstream-failure.ts';
import type { ExchangeTimes, TaskMemory } from './task-rules.ts';

export type { ExchangeTimes } from './task-rules.ts';

/** One answer of the upstream that departs from the contract, as the proxy lists and logs it. */
export interface Deviation {
  check: string;
  method: string;
  path: string;
  status: number;
  request_id: string | null;
  message: string;
  curl: string;
}

/** An upstream that sent no status line within the proxy's upstream timeout (the proxy answered 504 itself). */
export const UPSTREAM_TIMEOUT_CHECK = 'wire.upstream.timeout';

/** Every check the proxy runs, in the order it runs them: a report has a case for each, failing or not. */
export const PROXY_CHECKS: readonly string[] = [...ANSWER_CHECKS, ...Object.values(STREAM_ORDER_CHECKS), ...TASK_CHECKS, UPSTREAM_TIMEOUT_CHECK];

/**
 * The conformance suite's checks of any answer, all of them rather than the first (the proxy reports, it does not
 * stop), plus the value formats, and the event order of a text stream. An answer whose body could not be read is
 * checked on status and headers only.
 */
function answerDeviations(contract: ResponseContract, exchange: Exchange, complete: boolean): AnswerDeviation[] {
  const found = genericDeviations(contract, exchange);
  if (!complete) return found.filter((d) => d.check !== 'wire.schema.response');
  const format = streamFormatOf(exchange.path);
  const streamed = format !== null && exchange.status >= 200 && exchange.status < 300 && (exchange.headers.get('content-type') ?? '').startsWith('text/event-stream');
  // Any answer passes through, an empty one included: a stream without a content delta keeps the order.
  const order = streamed ? streamOrderProblems(format, exchange.events, { ...streamRequestOf(format, exchange.requestBody), emptyAllowed: true }) : [];
  return [...found, ...formatDeviations(exchange), ...order];
}

/**
 * The proxy's checks of the exchanges it passes on, in the order they end: each answer alone, then the task rules
 * across answers, which keep what they have seen. `times` (the proxy's) tell exchanges that overlapped apart;
 * without them each exchange is taken as after every earlier one.
 */
export function createChecker(
  contract: ResponseContract,
  upstream: string,
  memory?: TaskMemory,
): (exchange: Exchange, complete: boolean, times?: ExchangeTimes) => Deviation[] {
  const taskRules = createTaskRules(memory);
  return (exchange, complete, times) => {
    const across = complete ? taskRules(exchange, times) : [];
    return reported([...answerDeviations(contract, exchange, complete), ...across], exchange, upstream);
  };
}

/**
 * A request the upstream did not answer in time, as a deviation of the upstream: `exchange` holds the request and
 * the proxy's own 504 with its request id, and its curl line asks the upstream again.
 */
export const timeoutDeviation = (exchange: Exchange, upstream: string, timeout: UpstreamTimeout): Deviation[] =>
  reported([{ check: UPSTREAM_TIMEOUT_CHECK, message: timeout.message }], exchange, upstream);

function reported(found: AnswerDeviation[], exchange: Exchange, upstream: string): Deviation[] {
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
  }));
}

const show = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value) ?? 'nothing');

/** The one stderr line of a deviation. */
export const deviationLine = (d: Deviation): string => `deviation ${d.check} ${d.method} ${d.path} ${d.status} ${d.request_id ?? '-'}: ${d.message}`;
