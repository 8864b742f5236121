import { request as httpRequest } from 'node:http';
import type { IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { lookup as dnsLookup } from 'node:dns';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { isInternalAddress, isIpLiteral } from '../address-guard/index.ts';

export interface Outgoing {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
}

export interface SendResult {
  status: number;
  /** The first 1 KB of the answer. */
  excerpt: string;
}

/** One HTTP POST; resolves with any answer (redirects are not followed), rejects on a connection failure or timeout. */
export type Send = (outgoing: Outgoing) => Promise<SendResult>;

const EXCERPT_BYTES = 1024;

/** The receiver took the connection but sent no status line in time (a timeout, not an unreachable address). */
export class NoAnswerInTime extends Error {
  constructor(timeoutMs: number) {
    super(`no answer within ${timeoutMs} ms`);
  }
}

/**
 * The real sender: node:http(s) with the internal-address guard (`isInternalAddress`, the submission check's own)
 * applied at connect time: to the addresses a name resolves to, so a name cannot be pointed somewhere internal
 * between the check and the connection, and to an address written as an IP, which node connects to without a lookup.
 * @see reference "Events" → Delivery; "Addresses must be HTTPS and not internal"
 */
export function createSender(allowInsecure: boolean): Send {
  return (outgoing) =>
    new Promise((resolve, reject) => {
      const url = new URL(outgoing.url);
      if (!allowInsecure && isIpLiteral(url.hostname) && isInternalAddress(url.hostname)) {
        reject(internalRefusal(`${url.hostname} is an internal-network address`));
        return;
      }
      const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
      let settled = false;
      const fail = (error: Error): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        req.destroy();
        reject(error);
      };
      const req = request(url, {
        method: 'POST',
        headers: { ...outgoing.headers, 'Content-Length': Buffer.byteLength(outgoing.body) },
        ...(allowInsecure ? {} : { lookup: guardedLookup }),
      });
      // The status line must come within the limit; the body may trickle after it (the reference: "return any
      // 2xx within 10 seconds"). What the body has sent by the deadline, or its first 1 KB, is the excerpt.
      let atDeadline = (): void => fail(new NoAnswerInTime(outgoing.timeoutMs));
      const timer = setTimeout(() => atDeadline(), outgoing.timeoutMs);
      req.on('error', fail);
      req.on('response', (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        let length = 0;
        const done = (): void => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve({ status: res.statusCode ?? 0, excerpt: Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString('utf8') });
          req.destroy();
        };
        atDeadline = done;
        res.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          length += chunk.length;
          if (length >= EXCERPT_BYTES) done();
        });
        // A receiver that cuts its body short after a 2xx status line has still answered.
        res.on('error', done);
        res.on('close', done);
        res.on('end', done);
      });
      req.end(outgoing.body);
    });
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

function guardedLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, []);
    const internal = addresses.find((a) => isInternalAddress(a.address));
    if (internal) return callback(internalRefusal(`${hostname} resolves to an internal-network address (${internal.address})`), []);
    if (options.all) return callback(null, addresses);
    const first = addresses[0];
    return first ? callback(null, first.address, first.family) : callback(new Error(`${hostname} has no address`), []);
  });
}

function internalRefusal(message: string): NodeJS.ErrnoException {
  const refused: NodeJS.ErrnoException = new Error(message);
  refused.code = 'EINTERNAL';
  return refused;
}
