import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ReceivedCallback } from './types.ts';

/** What the receiver answers a request it was told to fail: a server error, so the sender retries. */
const FAILED_STATUS = 500;

/**
 * A callback address under the receiver's `base` whose first `failures` requests are answered 500, then 200:
 * a check that exercises retries needs no handle on the receiver, only this address (it also works through a
 * public address that forwards paths to the receiver).
 */
export function failingAddress(base: string, failures: number, tag: string): string {
  return `${base.endsWith('/') ? base : `${base}/`}fail-first/${failures}/${encodeURIComponent(tag)}`;
}

const FAIL_FIRST = /^\/fail-first\/(\d+)\//;

export interface CallbackReceiver {
  port: number;
  received: ReceivedCallback[];
  /** Answers the next `times` requests 500: to `path` only when given, else whichever come next. */
  fail(times: number, path?: string): void;
  close(): Promise<void>;
}

/**
 * The suite's callback receiver: records every request's raw body, headers, path and the status it answered.
 * Answers 200, except the first N requests to a `failingAddress` and those `fail` asked for, which get 500.
 * `now` stamps each request with the deployment's time as the suite estimates it.
 */
export async function startCallbackReceiver(port: number, options: { now?: () => number | Promise<number> } = {}): Promise<CallbackReceiver> {
  const received: ReceivedCallback[] = [];
  const seen = new Map<string, number>();
  const failuresByPath = new Map<string, number>();
  let failuresNext = 0;

  /** Whether this request is one to fail, counting it off whatever asked for it. */
  const shouldFail = (path: string): boolean => {
    const count = (seen.get(path) ?? 0) + 1;
    seen.set(path, count);
    const pathFailures = failuresByPath.get(path) ?? 0;
    if (pathFailures > 0) {
      failuresByPath.set(path, pathFailures - 1);
      return true;
    }
    if (failuresNext > 0) {
      failuresNext -= 1;
      return true;
    }
    const planned = FAIL_FIRST.exec(path);
    return planned !== null && count <= Number(planned[1]);
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      const status = shouldFail(path) ? FAILED_STATUS : 200;
      const callback: ReceivedCallback = {
        headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)])),
        raw: Buffer.concat(chunks).toString('utf8'),
        path,
        answered: status,
        receivedWallMs: Date.now(),
      };
      // The time is read before the answer goes: the sender (the emulator in the middle of an advance of its
      // clock) is still at the moment it sent.
      void Promise.resolve(options.now?.())
        .then((at) => {
          if (at !== undefined) callback.receivedMs = at;
        }, () => undefined)
        .finally(() => {
          received.push(callback);
          res.writeHead(status).end(status === 200 ? 'ok' : 'failing on purpose');
        });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  return {
    port: (server.address() as AddressInfo).port,
    received,
    fail(times, path) {
      if (path === undefined) failuresNext += times;
      else failuresByPath.set(path, (failuresByPath.get(path) ?? 0) + times);
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
