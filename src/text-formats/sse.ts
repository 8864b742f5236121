/** One server-sent event: an optional name and its data (an object is sent as JSON). */
export interface SseEvent {
  event?: string;
  data: unknown;
  /** Output tokens this event delivers (content deltas), for pacing, mid-stream errors and disconnects. */
  tokens?: number;
}

/** An event as it goes on the wire (`encodeEvent`'s text), and the output tokens it delivers. */
export interface WireEvent {
  text: string;
  tokens: number;
}

/**
 * The one SSE encoder: `event:` and `data:` lines, data split on line breaks, a blank line after each event.
 * @see reference "Streaming"
 */
export function encodeEvent(event: SseEvent): string {
  const data = typeof event.data === 'string' ? event.data : JSON.stringify(event.data);
  // JSON has its line breaks escaped: only a text payload with a raw one needs splitting (most events are JSON).
  const body = LINE_BREAK.test(data) ? data.split(LINE_BREAKS).join('\ndata: ') : data;
  return event.event ? `event: ${event.event}\ndata: ${body}\n\n` : `data: ${body}\n\n`;
}

const LINE_BREAK = /[\r\n]/;
const LINE_BREAKS = /\r\n|\r|\n/;

export const wire = (event: SseEvent): WireEvent => ({ text: encodeEvent(event), tokens: event.tokens ?? 0 });

/**
 * A value `eventTemplate` fills in later: put `slot(0)`, `slot(1)`, … in an event's JSON data, in the order
 * they appear once serialized.
 */
export const slot = (n: number): string => `\u0000slot${n}\u0000`;

/**
 * `encodeEvent` for a run of events alike but for a few values (the content deltas of a stream: one piece of
 * text each, the Responses-style ones a sequence number too): the event is encoded once with slots, and each
 * event of the run is the text around them with its values' JSON in between. The text is the same as
 * `encodeEvent` gives for the event with the values in place: the data is JSON, whose line breaks are escaped.
 */
export function eventTemplate(event: SseEvent & { data: object }, slots: 1): (value: unknown) => string;
export function eventTemplate(event: SseEvent & { data: object }, slots: 2): (first: unknown, second: unknown) => string;
export function eventTemplate(event: SseEvent & { data: object }, slots: 1 | 2): (first: unknown, second?: unknown) => string {
  const text = encodeEvent(event);
  const parts: string[] = [];
  let from = 0;
  for (let n = 0; n < slots; n++) {
    const marker = JSON.stringify(slot(n));
    const at = text.indexOf(marker, from);
    if (at === -1) throw new Error(`eventTemplate: slot ${n} is not in the event's data, after slot ${n - 1}`);
    parts.push(text.slice(from, at));
    from = at + marker.length;
  }
  parts.push(text.slice(from));
  const [a = '', b = '', c = ''] = parts;
  return slots === 1 ? (value) => a + JSON.stringify(value) + b : (first, second) => a + JSON.stringify(first) + b + JSON.stringify(second) + c;
}

/**
 * @see reference "Streaming": reverse proxies must not buffer.
 *
 * No `Connection` header: node writes the one the client asked for (`keep-alive`, or `close` for `Connection:
 * close`, an HTTP/1.0 client or a server shutting down) and closes the connection after the stream when it says
 * `close`. A fixed `keep-alive` would keep open a connection whose client asked to close it, and the next
 * request on it would meet node's bare 400.
 */
export const STREAM_HEADERS = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-cache, no-transform',
  'X-Accel-Buffering': 'no',
} as const;
