/**
 * What the conformance suite, the checking proxy, the recording and parity all read off the wire: an exchange and
 * its parts (and the ended exchange, with its raw bytes and times, that the proxy hands the recording), JSON and
 * event-stream parsing, the fields every answer carries, secrets and how they are hidden, the curl line that
 * reproduces an exchange. A leaf: it imports none of those four.
 */
export { toExchange } from './exchange.ts';
export type { Exchange, ExchangeAnswer, ExchangeRequest } from './exchange.ts';
export type { EndedExchange, Injected } from './ended-exchange.ts';
export { parseJson } from './json.ts';
export { parseSse } from './sse.ts';
export type { StreamEvent } from './sse.ts';
export { errorOf, POINTS, REQUEST_ID } from './answer-fields.ts';
export { isSecretHeader, REDACTED, redactSecrets } from './secrets.ts';
export { curlOf } from './curl.ts';
export { unreachableReason } from './network.ts';
export { HOP_BY_HOP } from './hop-by-hop.ts';
