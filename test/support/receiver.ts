import { createServer } from 'node:http';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { createServer as createTcpServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import { performance } from 'node:perf_hooks';

/** A callback as it reached the receiver: the raw bytes, exactly as signed. */
export interface Received {
  headers: IncomingHttpHeaders;
  raw: Buffer;
  method: string;
  path: string;
  /** Real time the request was complete at the receiver (performance.now(), never faked by tests). */
  arrivedAt: number;
}

/** How the receiver answers the n-th request (0-based); default 200. */
export type Answer = (n: number, res: ServerResponse) => void;

export interface Receiver {
  url: string;
  received: Received[];
  close(): Promise<void>;
}

/** A real HTTP receiver on a free local port, for the emulator's callbacks. */
export async function startReceiver(answer: Answer = (_n, res) => res.writeHead(200).end('ok')): Promise<Receiver> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const n = received.length;
      received.push({ headers: req.headers, raw: Buffer.concat(chunks), method: req.method ?? '', path: req.url ?? '', arrivedAt: performance.now() });
      answer(n, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Answers with `status` for the first `count` requests, then 200. */
export const failFirst =
  (count: number, status = 500): Answer =>
  (n, res) =>
    void res.writeHead(n < count ? status : 200).end(n < count ? 'not yet' : 'ok');

/** Never answers: the request is read and left hanging until the sender gives up. */
export const hang: Answer = () => undefined;

/** Answers `status` after `ms` of real time. */
export const answerAfter =
  (ms: number, status = 200): Answer =>
  (_n, res) =>
    void setTimeout(() => res.writeHead(status).end('late'), ms);

/** Sends a 200 status line at once, then the body a piece at a time, ending after `ms` of real time. */
export const trickleBody =
  (ms: number): Answer =>
  (_n, res) => {
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    res.write('accepted;');
    setTimeout(() => res.end(' finally done'), ms);
  };

/** A TCP port that accepts connections and never reads from them or writes to them. */
export async function startBlackHole(): Promise<{ url: string; connections: () => number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  const server = createTcpServer((socket) => {
    accepted += 1;
    sockets.add(socket);
    socket.pause();
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    connections: () => accepted,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * Waits for real I/O (a callback on its way to a receiver) by turning the event loop until `ready()` holds, for
 * at most `limitMs` of real time; setImmediate and performance.now are never faked, so this works beside fake
 * timers. Returns whether it held.
 */
export async function ioUntil(ready: () => boolean, limitMs = 10_000): Promise<boolean> {
  const until = performance.now() + limitMs;
  while (performance.now() < until) {
    if (ready()) return true;
    await new Promise((resolve) => setImmediate(resolve));
  }
  return ready();
}
