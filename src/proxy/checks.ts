import { formatDeviations, genericDeviations } from '../conformance/answers.ts';
import type { AnswerDeviation } from '../conformance/answers.ts';
import { curlOf } from '../conformance/client.ts';
import type { Exchange } from '../conformance/client.ts';
import type { ResponseContract } from '../conformance/spec.ts';

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

/**
 * The conformance suite's checks of any answer, all of them rather than the first (the proxy reports, it does not
 * stop), plus the value formats. An answer whose body could not be read is checked on status and headers only.
 */
export function deviationsOf(contract: ResponseContract, exchange: Exchange, complete: boolean, upstream: string): Deviation[] {
  let found: AnswerDeviation[] = genericDeviations(contract, exchange);
  if (complete) found = [...found, ...formatDeviations(exchange)];
  else found = found.filter((d) => d.check !== 'wire.schema.response');
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

/**
 * The proxy's checks of the exchanges it passes on, in the order they end. A checker keeps what it has seen, for
 * the rules across exchanges.
 */
export function createChecker(contract: ResponseContract, upstream: string): (exchange: Exchange, complete: boolean) => Deviation[] {
  return (exchange, complete) => deviationsOf(contract, exchange, complete, upstream);
}

const show = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value) ?? 'nothing');

/** The one stderr line of a deviation. */
export const deviationLine = (d: Deviation): string => `deviation ${d.check} ${d.method} ${d.path} ${d.status} ${d.request_id ?? '-'}: ${d.message}`;
