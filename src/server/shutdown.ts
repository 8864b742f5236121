import type { IncomingMessage, Server, ServerResponse } from 'node:http';

/**
 * Stops listening, lets the requests in flight finish, and resolves once every connection is closed, with the
 * number of requests that were still unfinished when the grace period ran out and their connections were cut.
 */
export type CloseGracefully = (graceMs: number) => Promise<number>;

/**
 * Follows `server`'s requests from now on, so that a later shutdown can wait for them. Call before listening.
 *
 * Node's own `close()` stops listening and closes idle connections, but a kept-alive connection whose request is
 * still running stays open after its answer until the keep-alive timeout, and could even carry a new request. So
 * while closing, every answer not yet started says `Connection: close`, and each connection is closed as soon as
 * its answer has been sent; whatever is still running after the grace period is cut.
 */
export function followRequests(server: Server): CloseGracefully {
  const running = new Set<ServerResponse>();
  let closing = false;
  // Once an answer is finished its connection is idle (node detaches the answer first): close it then.
  const closeWhenDone = (res: ServerResponse): void => {
    res.once('finish', () => setImmediate(() => server.closeIdleConnections()));
    if (!res.headersSent) res.setHeader('Connection', 'close');
  };
  // Before the app's listener, so the header is set before any handler can start its answer.
  server.prependListener('request', (_req: IncomingMessage, res: ServerResponse) => {
    running.add(res);
    res.once('close', () => running.delete(res));
    if (closing) closeWhenDone(res);
  });

  let closed: Promise<number> | null = null;
  return (graceMs) => {
    closed ??= new Promise<number>((resolve) => {
      closing = true;
      let cut = 0;
      const deadline = setTimeout(() => {
        cut = running.size;
        server.closeAllConnections();
      }, graceMs);
      // Not listening (never started, or failed to) is as closed as it gets.
      server.close(() => {
        clearTimeout(deadline);
        resolve(cut);
      });
      for (const res of running) closeWhenDone(res);
    });
    return closed;
  };
}
