import { toExchange, unreachableReason } from '../wire/index.ts';
import type { Exchange } from '../wire/index.ts';
import type { TimedExchange } from '../observed/index.ts';
import { genericDeviations } from './answers.ts';
import type { ResponseContract } from './spec.ts';

export interface RequestOptions {
  body?: unknown;
  /** Sent as is (to send malformed JSON). */
  raw?: string;
  headers?: Record<string, string>;
  /** `null`: no Authorization header at all. */
  key?: string | null;
  /** Skip the generic checks (an answer a check expects to be outside the document). */
  unchecked?: boolean;
}

/** A problem found in an answer. */
export class CheckFailure extends Error {
  constructor(
    message: string,
    readonly exchange: Exchange | null,
    readonly expected?: unknown,
    readonly actual?: unknown,
  ) {
    super(message);
  }
}

/** Thrown by a check that finds it cannot run against this deployment for a reason that is no deviation. */
export class CheckSkipped extends Error {}

/**
 * HTTP to the deployment under test, with the generic checks on every answer: no 5xx, an X-Request-Id of the
 * documented form, and status, content type, headers and body as the document says.
 */
export interface Client {
  readonly baseUrl: string;
  readonly key: string;
  request(method: string, path: string, options?: RequestOptions): Promise<Exchange>;
  /** Every exchange so far (for reports). */
  readonly log: Exchange[];
}

/** Who else sees each exchange: the behaviour checks, with the times on the deployment's clock. */
export interface Watcher {
  now(): number;
  seen(timed: TimedExchange): void;
}

export function createClient(baseUrl: string, key: string, contract: ResponseContract, timeoutMs = 60_000, watcher?: Watcher): Client {
  const log: Exchange[] = [];
  return {
    baseUrl,
    key,
    log,
    async request(method, path, options = {}) {
      const headers: Record<string, string> = { ...options.headers };
      const k = options.key === undefined ? key : options.key;
      if (k !== null && !Object.keys(headers).some((h) => h.toLowerCase() === 'authorization' || h.toLowerCase() === 'x-api-key')) {
        headers['Authorization'] = `Bearer ${k}`;
      }
      const body = options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
      if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['Content-Type'] = 'application/json';
      // A deployment that never answers (or streams forever) fails the check instead of hanging the suite.
      const signal = AbortSignal.timeout(timeoutMs);
      let res: Response;
      let text: string;
      const sentMs = watcher?.now() ?? 0;
      try {
        res = await fetch(`${baseUrl}${path}`, { method, headers, signal, ...(body !== undefined ? { body } : {}) });
        text = await res.text();
      } catch (err) {
        const reason = (err as Error).name === 'TimeoutError' ? `no complete answer within ${timeoutMs} ms` : `cannot reach ${baseUrl} (${unreachableReason(err, timeoutMs)})`;
        throw new CheckFailure(`${method} ${path}: ${reason}`, null);
      }
      const exchange = toExchange({ method, path, requestHeaders: headers, requestBody: body }, { status: res.status, headers: res.headers, text });
      log.push(exchange);
      watcher?.seen({ exchange, sentMs, receivedMs: watcher.now() });
      if (!options.unchecked) genericChecks(contract, exchange);
      return exchange;
    },
  };
}

function genericChecks(contract: ResponseContract, exchange: Exchange): void {
  const [first] = genericDeviations(contract, exchange);
  if (first) throw new CheckFailure(first.message, exchange, first.expected, first.actual);
}
