import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestListener, Server } from 'node:http';
import { answerClientErrors } from './client-errors.ts';
import type { ClientRefusal, RefusalAnswer } from './client-errors.ts';
import { capConnections } from './connection-cap.ts';
import { openFileLimit } from './connections.ts';
import { closeSlowHeaders } from './headers-deadline.ts';
import { START_DEFAULTS } from '../defaults/index.ts';

/**
 * Limits of the HTTP server itself, enforced by node before a request reaches the app. The reference names none,
 * so they are emulator-defined: generous enough never to cut a real client (a long stream, a slow 50 MB upload),
 * tight enough that a stuck or hostile client cannot hold a connection for ever.
 */
export interface ServerLimits {
  /** Request line plus headers, in bytes; over it 431 and the connection closes. */
  maxHeaderBytes: number;
  /**
   * Real ms from a connection's start, or a kept-alive connection's first byte after an answer, to the end of a
   * request's headers; after it the connection closes, with a 408 when part of a request came. 0: none.
   */
  headersTimeoutMs: number;
  /**
   * Real ms from a request's first byte to the end of its body; after it, 408. 0: none. Only receiving counts:
   * an answer, a text stream included, takes as long as it takes.
   */
  requestTimeoutMs: number;
  /** Real ms an idle kept-alive connection stays open (sent as `Keep-Alive: timeout=`). 0: until the client closes it. */
  keepAliveTimeoutMs: number;
  /**
   * Open connections at most; at it, a new one closes the longest-idle connection, or, while every one has a
   * request in flight, is itself closed at once without an answer (and a warning, once per burst).
   * null: no cap, the in-process default; `start` sets one below the open-file limit (see `connectionBudget`).
   */
  maxConnections: number | null;
}

/** Node's own header size and keep-alive; ten minutes to send a request (a 50 MB upload at 85 KB/s). */
export const DEFAULT_SERVER_LIMITS: ServerLimits = {
  maxHeaderBytes: START_DEFAULTS.maxHeaderBytes,
  headersTimeoutMs: START_DEFAULTS.headersTimeoutMs,
  requestTimeoutMs: START_DEFAULTS.requestTimeoutMs,
  keepAliveTimeoutMs: START_DEFAULTS.keepAliveTimeoutMs,
  maxConnections: null,
};

/**
 * Fills in the defaults. The headers are part of the request, so their default timeout is never longer than the
 * request's; set both, they must agree.
 */
export function resolveLimits(given: Partial<ServerLimits> = {}): ServerLimits {
  const requestTimeoutMs = given.requestTimeoutMs ?? DEFAULT_SERVER_LIMITS.requestTimeoutMs;
  const headersTimeoutMs =
    given.headersTimeoutMs ??
    (requestTimeoutMs > 0 ? Math.min(DEFAULT_SERVER_LIMITS.headersTimeoutMs, requestTimeoutMs) : DEFAULT_SERVER_LIMITS.headersTimeoutMs);
  if (requestTimeoutMs > 0 && headersTimeoutMs > requestTimeoutMs) {
    throw new RangeError(`the headers timeout (${headersTimeoutMs} ms) must not be longer than the request timeout (${requestTimeoutMs} ms)`);
  }
  return {
    maxHeaderBytes: given.maxHeaderBytes ?? DEFAULT_SERVER_LIMITS.maxHeaderBytes,
    headersTimeoutMs,
    requestTimeoutMs,
    keepAliveTimeoutMs: given.keepAliveTimeoutMs ?? DEFAULT_SERVER_LIMITS.keepAliveTimeoutMs,
    maxConnections: given.maxConnections ?? DEFAULT_SERVER_LIMITS.maxConnections,
  };
}

export interface LimitedServerOptions {
  /** Hears when the connection cap is reached. */
  warn?: (message: string) => void;
  /**
   * The answer to a request refused by the limits (431, 408) or by node's parser (400), instead of node's bare
   * status line; see `answerClientErrors`.
   */
  refuse?: (refusal: ClientRefusal) => RefusalAnswer;
  /** The classes of the server's requests and responses (node's own when not given). */
  classes?: { IncomingMessage: typeof IncomingMessage; ServerResponse: typeof ServerResponse };
}

/** A node HTTP server for `app` with these limits. */
export function createLimitedServer(app: RequestListener, limits: ServerLimits, options: LimitedServerOptions = {}): Server {
  const { warn, refuse, classes } = options;
  const server = createServer(
    {
      ...classes,
      maxHeaderSize: limits.maxHeaderBytes,
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      // Node looks for overdue requests every 30 s by default, which would let a 1 s timeout run 31 s; looking
      // twice per shortest timeout keeps every cut within 1.5 times its timeout.
      connectionsCheckingInterval: checkingInterval(limits),
    },
    app,
  );
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  // Node's check alone lets a connection outlive the headers timeout (see closeSlowHeaders).
  closeSlowHeaders(server, limits.headersTimeoutMs);
  if (refuse) answerClientErrors(server, limits, refuse);
  if (limits.maxConnections !== null) capConnections(server, limits.maxConnections, warn, warn ? openFileLimit() : null);
  return server;
}

function checkingInterval(limits: ServerLimits): number {
  const timeouts = [limits.headersTimeoutMs, limits.requestTimeoutMs].filter((ms) => ms > 0);
  if (timeouts.length === 0) return 30_000;
  return Math.min(30_000, Math.max(25, Math.floor(Math.min(...timeouts) / 2)));
}
