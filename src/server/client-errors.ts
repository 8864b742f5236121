import { STATUS_CODES } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * A request node's HTTP parser refused, or cut for taking too long, before the app could answer it. Node answers
 * these itself with a bare status line (no body, no headers of ours); with `answerClientErrors` the app's answer
 * is written instead.
 */
export interface ClientRefusal {
  /** 431 headers too large, 408 too slow, 413 chunk extensions too large, 400 anything else the parser refused. */
  status: 400 | 408 | 413 | 431;
  /** Node's error code: `HPE_HEADER_OVERFLOW`, `ERR_HTTP_REQUEST_TIMEOUT`, `HPE_INVALID_METHOD`... */
  reason: string;
  /** From the request line, when node had read it whole; null when not known. */
  method: string | null;
  /** The request target without its query, when known. */
  path: string | null;
  /**
   * The app's response, when the app already has the request (its headers came, its body did not come whole):
   * the answer is written through it, so the app's request id, call record and log line follow it.
   */
  response: ServerResponse | null;
  /** False when the connection cannot carry an answer (the client has gone): the refusal is only recorded. */
  answerable: boolean;
  /** Real ms the request is known to have taken at least (a headers timeout: the timeout), else 0. */
  tookMs: number;
}

/** The answer to a refusal: its headers (Content-Length and `Connection: close` are added) and body. */
export interface RefusalAnswer {
  headers: Record<string, string>;
  body: string;
}

/** Writes nothing and closes: what node does for a client that went away. */
const GONE = /^(?:ECONNRESET|EPIPE|ECONNABORTED|ETIMEDOUT|HPE_INVALID_EOF_STATE)$/;

/**
 * Takes over node's own answers to requests its parser refuses (`clientError`): `answer` decides what the
 * client gets, which is written with `Connection: close` before the connection closes. A request the app
 * already has is answered through its response; one the app never saw is written to the connection as soon as
 * any answer before it on that connection is done. A client that has gone (a reset, or a connection closed in
 * the middle of a request) is closed without an answer, as node does, and so is one timed out before it sent a byte.
 * @see node's lib/_http_server.js `socketOnError`, whose canned answers this replaces
 */
export function answerClientErrors(server: Server, timeouts: { headersTimeoutMs: number; requestTimeoutMs: number }, answer: (refusal: ClientRefusal) => RefusalAnswer): void {
  /**
   * The last request of each connection while its answer is going or its body is still coming (a request answered
   * early is kept until its body is in, so a cut in its body is not answered twice).
   */
  const latest = new WeakMap<Socket, ServerResponse>();
  /** Connections already refused: the parser repeats its error for every later chunk, and at the end. */
  const refused = new WeakSet<Socket>();

  /** A response's 'close' (one function for every request): its connection forgets it, unless its body is still coming. */
  function answered(this: ServerResponse): void {
    const { socket } = this.req;
    if (this.req.complete && latest.get(socket) === this) latest.delete(socket);
  }
  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    latest.set(req.socket, res);
    res.once('close', answered);
  });

  server.on('clientError', (err: Error & { code?: string; rawPacket?: Buffer }, socket: Socket) => {
    if (refused.has(socket)) return;
    refused.add(socket);
    const reason = err.code ?? '';
    const last = latest.get(socket);
    const reading = last && !last.req.complete ? last : null;
    // Node's own check cuts a connection that never sent a byte too: it asked nothing, so it gets nothing, as
    // closeSlowHeaders closes it (an answer could be read as the answer to a request it is just sending).
    if (GONE.test(reason) || !reason || (reason === 'ERR_HTTP_REQUEST_TIMEOUT' && socket.bytesRead === 0)) {
      // A request the app has ends with its response's 'close', which records it as the app saw it.
      socket.destroy();
      return;
    }
    if (reading?.headersSent) {
      // The client has (or is getting) its answer already, which its record holds; the rest of its body is not awaited.
      socket.destroy();
      return;
    }
    const status = statusOf(reason);
    const line = reading ? { method: reading.req.method ?? null, path: pathOf(reading.req.url ?? '') } : requestLine(err.rawPacket);
    const headersDone = reading !== null;
    const tookMs =
      status !== 408 ? 0 : headersDone || timeouts.headersTimeoutMs === 0 ? timeouts.requestTimeoutMs : timeouts.headersTimeoutMs;
    const refusal: ClientRefusal = { status, reason, ...line, response: reading, answerable: socket.writable, tookMs };
    const written = answer(refusal);
    if (!refusal.answerable) {
      socket.destroy();
      return;
    }
    if (reading) {
      reading.statusCode = status;
      for (const [name, value] of Object.entries(written.headers)) reading.setHeader(name, value);
      reading.setHeader('Connection', 'close');
      reading.setHeader('Content-Length', Buffer.byteLength(written.body));
      // Node closes the connection once this is written (`Connection: close`); the body still coming is dropped.
      reading.end(written.body);
      return;
    }
    // An answer still going on this connection comes first; the refusal follows it.
    if (last && !last.writableEnded) last.once('close', () => writeRaw(socket, status, written));
    else writeRaw(socket, status, written);
  });
}

/** Node's own choice of status for each parser error. */
function statusOf(reason: string): ClientRefusal['status'] {
  switch (reason) {
    case 'HPE_HEADER_OVERFLOW':
      return 431;
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return 413;
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return 408;
    default:
      return 400;
  }
}

/** The method and path of a request line read whole (`err.rawPacket` holds the chunk the parser stopped in). */
function requestLine(raw: Buffer | undefined): { method: string | null; path: string | null } {
  const first = raw?.subarray(0, 8192).toString('latin1');
  const match = first ? /^([!#$%&'*+.^_`|~0-9A-Za-z-]+) (\S+) HTTP\/\d\.\d\r?\n/.exec(first) : null;
  if (!match?.[1] || !match[2]) return { method: null, path: null };
  return { method: match[1], path: pathOf(match[2]) };
}

function pathOf(target: string): string {
  const query = target.indexOf('?');
  return query === -1 ? target : target.slice(0, query);
}

/**
 * Writes a whole answer to a connection node's parser has given up on, then closes it once the client has read
 * it: at the client's end, or a second after the answer is out (a client still sending is not waited for; closing
 * at once while its bytes come in could reset the connection before it read the answer).
 */
function writeRaw(socket: Socket, status: number, answer: RefusalAnswer): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const headers = { ...answer.headers, 'Content-Length': String(Buffer.byteLength(answer.body)), Connection: 'close' };
  const head = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n${head.join('')}\r\n${answer.body}`);
  const linger = setTimeout(() => socket.destroy(), LINGER_MS).unref();
  socket.once('close', () => clearTimeout(linger));
  socket.once('end', () => socket.destroy());
}

const LINGER_MS = 1000;
