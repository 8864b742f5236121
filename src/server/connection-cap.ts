import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Holds `server` to `cap` open connections without letting idle ones lock clients out (issue 24: 20,000 idle
 * kept-alive connections once filled the cap and a new client was refused for over a minute). A connection is idle
 * when it has no request in flight: connected with nothing sent yet, or kept alive between requests. A new
 * connection at the cap closes the one idle longest to make room (closing an idle kept-alive connection is
 * allowed by HTTP, and clients retry it); one with a request in flight, a slow upload or an open stream, is never
 * closed for this. Only while every open connection is busy is the new one closed at once, without an answer.
 *
 * The cap is enforced here rather than with node's `server.maxConnections`, which drops a connection before any
 * listener could make room for it, and which counts the connections closed to make room until they are gone.
 * Every step is O(1): the idle connections are a Map in the order they went idle, so the first is the longest idle.
 *
 * `warn` hears once per burst: at the first connection closed for the cap, and with the counts once the open
 * connections fall below nine tenths of the cap (the next burst warns again).
 */
export function capConnections(server: Server, cap: number, warn?: (message: string) => void, openFiles: number | null = null): void {
  /** The open connections counted against the cap, each with its number of requests in flight. */
  const open = new Map<Socket, number>();
  /** The idle ones, longest idle first, each with the bytes it had read when it went idle. */
  const idle = new Map<Socket, number>();
  let burst = false;
  let evicted = 0;
  let refused = 0;

  const goIdle = (socket: Socket): void => {
    idle.delete(socket);
    idle.set(socket, socket.bytesRead);
  };

  /** Closes the connection idle longest; false when every open connection has a request in flight. */
  const makeRoom = (): boolean => {
    for (const [socket, bytesRead] of idle) {
      idle.delete(socket);
      // Bytes since it went idle are a request whose headers are still coming: busy, and idle again once answered.
      if (socket.bytesRead !== bytesRead) continue;
      open.delete(socket);
      socket.destroy();
      evicted += 1;
      return true;
    }
    return false;
  };

  const reached = (): void => {
    if (burst) return;
    burst = true;
    const limit = openFiles === null ? '' : ` (the open-file limit, ulimit -n, is ${openFiles})`;
    warn?.(
      `connection cap reached: ${cap} connections are open, so the longest-idle connections are closed to make room for new ones, and new ones are closed unanswered while none is idle; raise it with --max-connections${limit}`,
    );
  };

  server.on('connection', (socket: Socket) => {
    if (open.size >= cap) {
      reached();
      if (!makeRoom()) {
        refused += 1;
        socket.destroy();
        return;
      }
    }
    open.set(socket, 0);
    goIdle(socket);
    socket.once('close', () => {
      open.delete(socket);
      idle.delete(socket);
      if (!burst || open.size > cap - Math.max(1, Math.floor(cap / 10))) return;
      warn?.(`connection cap: ${evicted} idle connection(s) were closed to make room and ${refused} new one(s) were closed unanswered while at the cap of ${cap}; below it again`);
      burst = false;
      evicted = 0;
      refused = 0;
    });
  });

  // Before the app's listener, so a request is counted before any handler can answer it.
  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    const inFlight = open.get(socket);
    if (inFlight === undefined) return;
    open.set(socket, inFlight + 1);
    idle.delete(socket);
    res.once('close', () => {
      const left = (open.get(socket) ?? 0) - 1;
      if (left < 0) return;
      open.set(socket, left);
      if (left === 0 && !socket.destroyed) goIdle(socket);
    });
  });
}
