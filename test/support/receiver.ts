import { createServer } from 'node:http';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A callback as it reached the receiver: the raw bytes, exactly as signed. */
export interface Received {
  headers: IncomingHttpHeaders;
  raw: Buffer;
  method: string;
  path: string;
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
      received.push({ headers: req.headers, raw: Buffer.concat(chunks), method: req.method ?? '', path: req.url ?? '' });
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
