import { request as httpRequest } from 'node:http';
import type { IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';
import { unreachableReason } from '../wire/index.ts';

export interface Outgoing {
  url: URL;
  headers: Record<string, string>;
  body: Buffer;
  /** Real ms to connect, and then to send the status line once the body's last byte is out. */
  timeoutMs: number;
  /** Send the body in pieces over this many ms (null: at once). */
  trickleMs: number | null;
}

export interface Answered {
  /** The status, `timeout` (connected, no status line in time) or `unreachable` (the connection broke after it was made). */
  outcome: number | 'timeout' | 'unreachable';
  /** Real ms from the body's last byte to the status line. */
  elapsedMs: number;
  /** The first bytes of the answer, or why there was none. */
  excerpt: string;
}

/** No connection could be made to the receiver: the run stops here, nothing more is sent. */
export class ReceiverUnreachable extends Error {
  constructor(
    readonly url: string,
    readonly reason: string,
  ) {
    super(`cannot reach ${url} (${reason})`);
  }
}

const EXCERPT_BYTES = 200;
/** How long an answer's body may take, after its status line, to give its excerpt. */
const EXCERPT_WAIT_MS = 1_000;
const TRICKLE_PIECES = 6;

/**
 * One POST to the receiver, as the service sends a callback: node:http(s) straight, so nothing follows a redirect
 * (a 3xx is an answer, and a non-2xx one), the body goes out as the exact bytes given (in pieces when trickled),
 * and a connection is never reused between deliveries. Resolves with the answer; rejects with ReceiverUnreachable
 * when no connection could be made (refused, no such host, a TLS error, no connection in time).
 * @see reference "Events" → Delivery: any 2xx within 10 seconds; redirects are not followed
 */
export function sendDelivery(outgoing: Outgoing, now: () => number): Promise<Answered> {
  return new Promise((resolve, reject) => {
    const { url, timeoutMs } = outgoing;
    const secure = url.protocol === 'https:';
    const req = (secure ? httpsRequest : httpRequest)(url, {
      method: 'POST',
      headers: { ...outgoing.headers, 'Content-Length': String(outgoing.body.length) },
      agent: false,
    });
    let connected = false;
    let settled = false;
    let lastByteAt: number | null = null;
    let statusAt: number | null = null;
    const timers = new Set<NodeJS.Timeout>();
    const later = (ms: number, fn: () => void): void => void timers.add(setTimeout(fn, ms));
    const end = (): void => {
      settled = true;
      for (const t of timers) clearTimeout(t);
      req.destroy();
    };
    const unreachable = (reason: string): void => {
      if (settled) return;
      end();
      reject(new ReceiverUnreachable(url.href, reason));
    };
    const answer = (outcome: Answered['outcome'], excerpt: string): void => {
      if (settled) return;
      const from = lastByteAt ?? statusAt ?? now();
      const elapsedMs = Math.max(0, (statusAt ?? now()) - from);
      end();
      resolve({ outcome, elapsedMs, excerpt });
    };

    later(timeoutMs, () => {
      if (!connected) unreachable(`no connection within ${timeoutMs} ms`);
    });
    req.on('socket', (socket: Socket) => {
      socket.once(secure ? 'secureConnect' : 'connect', () => (connected = true));
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      const reason = unreachableReason({ cause: err }, timeoutMs);
      if (!connected) unreachable(reason);
      else answer('unreachable', reason);
    });
    req.on('response', (res: IncomingMessage) => {
      statusAt = now();
      const chunks: Buffer[] = [];
      let length = 0;
      const done = (): void => answer(res.statusCode ?? 0, Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString('utf8'));
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        length += chunk.length;
        if (length >= EXCERPT_BYTES) done();
      });
      res.on('end', done);
      res.on('close', done);
      res.on('error', done);
      later(EXCERPT_WAIT_MS, done);
    });

    const sent = (): void => {
      if (settled) return;
      lastByteAt = now();
      later(timeoutMs, () => (connected ? answer('timeout', `no status line within ${timeoutMs} ms`) : unreachable(`no connection within ${timeoutMs} ms`)));
    };
    if (outgoing.trickleMs === null || outgoing.body.length < TRICKLE_PIECES) {
      req.end(outgoing.body, sent);
      return;
    }
    const size = Math.ceil(outgoing.body.length / TRICKLE_PIECES);
    const gap = outgoing.trickleMs / (TRICKLE_PIECES - 1);
    const piece = (i: number): void => {
      if (settled) return;
      const chunk = outgoing.body.subarray(i * size, (i + 1) * size);
      if (i === TRICKLE_PIECES - 1) req.end(chunk, sent);
      else {
        req.write(chunk);
        later(gap, () => piece(i + 1));
      }
    };
    piece(0);
  });
}
