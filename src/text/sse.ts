/** One server-sent event: an optional name and its data (an object is sent as JSON). */
export interface SseEvent {
  event?: string;
  data: unknown;
  /** Output tokens this event delivers (content deltas), for pacing, mid-stream errors and disconnects. */
  tokens?: number;
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
