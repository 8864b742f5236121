import { performance } from 'node:perf_hooks';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Closes every connection that has not sent a whole request's headers within `headersTimeoutMs` of starting to
 * wait for them: from its connection, and from the first byte after an answer on a kept-alive connection.
 *
 * Node enforces its `headersTimeout` only at a periodic check, and only on connections its parser counts as
 * reading a request: a connection is cut up to one check late (a minute's timeout was checked every 30 s), and a
 * kept-alive connection that sends only empty lines after its answer is never cut, since an empty line starts no
 * request and every byte pushes its keep-alive timeout back (issue 36, item 10). This is the deadline of its own,
 * kept by one sweep over the connections waiting, in the order they began to wait, so a sweep looks only at those
 * due, and at the kept-alive ones for bytes since their answer.
 *
 * A connection that sent nothing since it began to wait is closed without a word (it asked nothing; an answer
 * could be read as the answer to a request it is just sending); one that sent part of a request gets node's
 * request-timeout error, which `answerClientErrors` answers with a 408 as it does node's own. A request whose
 * headers came is the request timeout's; a kept-alive connection that sends nothing is the keep-alive timeout's
 * (0: never closed).
 * @see node's lib/_http_server.js `checkConnections`, whose check this completes
 */
export function closeSlowHeaders(server: Server, headersTimeoutMs: number): void {
  if (headersTimeoutMs <= 0) return;
  /** Connections waiting for headers, in the order they began to wait, with when and the bytes read by then. */
  const waiting = new Map<Socket, { since: number; bytesRead: number }>();
  /** Kept-alive connections after their answer, with the bytes read by then: a byte more starts a wait. */
  const idle = new Map<Socket, number>();
  /** Requests in flight on each connection (more than one when pipelined). */
  const inFlight = new Map<Socket, number>();

  const wait = (socket: Socket, since: number, bytesRead: number): void => {
    waiting.delete(socket);
    waiting.set(socket, { since, bytesRead });
  };

  server.on('connection', (socket: Socket) => {
    wait(socket, performance.now(), 0);
    socket.once('close', () => {
      waiting.delete(socket);
      idle.delete(socket);
      inFlight.delete(socket);
    });
  });

  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    const { socket } = req;
    waiting.delete(socket);
    idle.delete(socket);
    inFlight.set(socket, (inFlight.get(socket) ?? 0) + 1);
    const done = (): void => {
      const left = (inFlight.get(socket) ?? 1) - 1;
      if (left > 0) return void inFlight.set(socket, left);
      inFlight.delete(socket);
      if (!socket.destroyed) idle.set(socket, socket.bytesRead);
    };
    // A request answered before its body came whole is done once the body is in: the bytes still coming are its
    // body, the request timeout's, not a next request's.
    res.once('close', () => (req.complete ? done() : req.once('end', done)));
  });

  const sweep = (): void => {
    const now = performance.now();
    for (const [socket, bytesRead] of idle) {
      if (socket.bytesRead === bytesRead) continue;
      // Bytes since the answer: a request begins (or empty lines), found at most one sweep after its first byte.
      idle.delete(socket);
      wait(socket, now, bytesRead);
    }
    for (const [socket, { since, bytesRead }] of waiting) {
      if (now - since < headersTimeoutMs) break;
      waiting.delete(socket);
      if (socket.bytesRead === bytesRead) socket.destroy();
      else timedOut(server, socket);
    }
  };

  // A tenth of the timeout between sweeps, within 25 ms and a second: a cut comes at most that much late.
  const every = Math.min(1000, Math.max(25, Math.floor(headersTimeoutMs / 10)));
  let timer: NodeJS.Timeout | null = null;
  const start = (): void => {
    timer ??= setInterval(sweep, every).unref();
  };
  if (server.listening) start();
  server.on('listening', start);
  server.on('close', () => {
    if (timer) clearInterval(timer);
    timer = null;
  });
}

/**
 * What node does to a connection its own check finds overdue (`onRequestTimeout`): the request-timeout error goes
 * to the server's `clientError` listeners, or, with none, a bare 408 is written and the connection closed.
 */
function timedOut(server: Server, socket: Socket): void {
  const err = Object.assign(new Error('Request timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' });
  // A destroyed socket's error must not go unheard: node's own handler leaves the same no-op in place.
  if (socket.listenerCount('error') === 0) socket.on('error', () => undefined);
  if (server.emit('clientError', err, socket)) return;
  if (socket.writable) socket.write('HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n');
  socket.destroy();
}
