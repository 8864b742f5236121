import { isSecretHeader, redactSecrets } from '../recording/redact.ts';
import { genericDeviations } from './answers.ts';
import { unreachableReason } from './network.ts';
import type { ResponseContract } from './spec.ts';

/** One request and its answer, as a check saw it. */
export interface Exchange {
  method: string;
  path: string;
  status: number;
  headers: Headers;
  text: string;
  /** The parsed JSON body, or undefined. */
  json: unknown;
  requestId: string | null;
  /** Server-sent events of a stream, in order. */
  events: StreamEvent[];
  requestHeaders: Record<string, string>;
  requestBody: string | undefined;
}

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

export function createClient(baseUrl: string, key: string, contract: ResponseContract, timeoutMs = 60_000): Client {
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
      try {
        res = await fetch(`${baseUrl}${path}`, { method, headers, signal, ...(body !== undefined ? { body } : {}) });
        text = await res.text();
      } catch (err) {
        const reason = (err as Error).name === 'TimeoutError' ? `no complete answer within ${timeoutMs} ms` : `cannot reach ${baseUrl} (${unreachableReason(err, timeoutMs)})`;
        throw new CheckFailure(`${method} ${path}: ${reason}`, null);
      }
      const exchange = toExchange({ method, path, requestHeaders: headers, requestBody: body }, { status: res.status, headers: res.headers, text });
      log.push(exchange);
      if (!options.unchecked) genericChecks(contract, exchange);
      return exchange;
    },
  };
}

/**
 * A request and its answer as the checks read them: the body as JSON when the content type says JSON, the events
 * of an event stream, the request id from X-Request-Id. The suite's client and the proxy both build them here.
 */
export function toExchange(
  request: Pick<Exchange, 'method' | 'path' | 'requestHeaders' | 'requestBody'>,
  answer: Pick<Exchange, 'status' | 'headers' | 'text'>,
): Exchange {
  const type = answer.headers.get('content-type') ?? '';
  const json = type.includes('json') ? parseJson(answer.text) : undefined;
  return {
    method: request.method,
    path: request.path,
    status: answer.status,
    headers: answer.headers,
    text: answer.text,
    json,
    requestId: answer.headers.get('x-request-id'),
    events: type.includes('text/event-stream') ? parseSse(answer.text) : [],
    requestHeaders: request.requestHeaders,
    requestBody: request.requestBody,
  };
}

function genericChecks(contract: ResponseContract, exchange: Exchange): void {
  const [first] = genericDeviations(contract, exchange);
  if (first) throw new CheckFailure(first.message, exchange, first.expected, first.actual);
}

/** Text as JSON; undefined when it is not JSON. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** A parsed server-sent event. */
export interface StreamEvent {
  event: string | null;
  data: string;
}

/** Server-sent events per the HTML standard's parsing rules (enough of them for the three formats). */
export function parseSse(text: string): StreamEvent[] {
  const events: StreamEvent[] = [];
  let event: string | null = null;
  let data: string[] = [];
  for (const line of text.split(/\r\n|\r|\n/)) {
    if (line === '') {
      if (data.length > 0) events.push({ event, data: data.join('\n') });
      event = null;
      data = [];
    } else if (line.startsWith('event:')) event = line.slice(6).trimStart();
    else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
  }
  if (data.length > 0) events.push({ event, data: data.join('\n') });
  return events;
}

/**
 * A curl line that reproduces an exchange, with no credential in it: the key shown as `sk-REDACTED` (put yours in
 * its place), other credential headers (signatures, nonces, cookies, tokens) as `[redacted]`, and secret-looking
 * strings in the address, the other headers and the body hidden as a recording hides them.
 */
export function curlOf(baseUrl: string, exchange: Exchange): string {
  const hide = (text: string): string => redactSecrets(text).text;
  const parts = [`curl -sS -X ${exchange.method} '${hide(`${baseUrl}${exchange.path}`)}'`];
  for (const [name, value] of Object.entries(exchange.requestHeaders)) {
    // Whatever form a key has, none of it is printed.
    const shown = /^authorization$/i.test(name)
      ? value.replace(/^(\S+\s+).*$/, '$1sk-REDACTED')
      : /^x-api-key$/i.test(name)
        ? 'sk-REDACTED'
        : isSecretHeader(name)
          ? '[redacted]'
          : hide(value);
    parts.push(`-H '${name}: ${shown}'`);
  }
  if (exchange.requestBody !== undefined) parts.push(`--data-raw '${hide(exchange.requestBody).replaceAll("'", "'\\''")}'`);
  return parts.join(' ');
}
