import { request as httpRequest } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { CallbackObservation } from '../observed/index.ts';
import { HOP_BY_HOP, toExchange } from '../wire/index.ts';
import type { Exchange } from '../wire/index.ts';
import { NOT_IN_CURL } from './exchange.ts';
import { answerJson, forwardable, headerObject } from './headers.ts';
import type { RelayTarget } from './relay.ts';

/** A callback the proxy passed on: as the checker reads it, and as a report shows it. */
export interface Relayed {
  target: RelayTarget;
  observation: CallbackObservation;
  /** The callback's request (no path: the receiver's address is the whole target) and the receiver's answer. */
  exchange: Exchange;
}

/** A receiver has 10 s to answer (the service then gives up); the proxy waits a little longer, then lets go. */
const RECEIVER_TIMEOUT_MS = 30_000;

/**
 * Passes one callback delivery on to the address it stands for, unchanged: the same method, headers (the
 * webhook-id, -timestamp and -signature among them) and raw bytes; the service gets the receiver's status, headers
 * and body back, or 502 when the receiver cannot be reached. `relayed` is called once the delivery has ended.
 * @see reference "Events" Task callbacks: Delivery
 */
export function relayDelivery(
  req: IncomingMessage,
  res: ServerResponse,
  target: RelayTarget,
  context: { now: () => number | Promise<number>; wallNow: () => number; log: (line: string) => void; arrived?: (body: Buffer) => void },
  relayed: (delivery: Promise<Relayed>) => void,
): void {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('error', () => res.destroy());
  req.on('end', () => {
    const receivedWallMs = context.wallNow();
    // The deployment's time at receipt, read as it arrives: the sender (an emulator in the middle of an advance of
    // its clock) is still at the moment it sent.
    const stamped = Promise.resolve(context.now());
    const body = Buffer.concat(chunks);
    // Come, whatever the receiver makes of it: the deadline of its arrival is met.
    context.arrived?.(body);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers[name] = value;
    const observation = stamped.then(async (receivedMs): Promise<CallbackObservation> => {
      const secrets = (await target.secrets?.(receivedMs)) ?? [];
      // webhook-timestamp is judged against this machine's clock, as a receiver checks it.
      return { headers, body, receivedMs, receivedWallMs, ...(secrets.length > 0 ? { secrets } : {}) };
    });
    let done = false;
    const ended = (status: number, answerHeaders: Headers, text: string): void => {
      if (done) return;
      done = true;
      const exchange = toExchange({ method: req.method ?? 'POST', path: '', requestHeaders: curlHeaders(headers), requestBody: body.toString('utf8') }, { status, headers: answerHeaders, text });
      // The receiver's answer is the service's: a non-2xx is a failed delivery, which the retry rule follows.
      relayed(observation.then((seen) => ({ target, observation: { ...seen, answered: status }, exchange: { ...exchange, requestId: null } })));
    };

    const url = new URL(target.original);
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const out = send(url, { method: req.method ?? 'POST', headers: headerObject([...forwardable(req.rawHeaders, new Set([...HOP_BY_HOP, 'host'])), ['Host', url.host]]), timeout: RECEIVER_TIMEOUT_MS });
    out.on('timeout', () => out.destroy(new Error(`no answer within ${RECEIVER_TIMEOUT_MS} ms`)));
    out.on('response', (answer) => {
      const back: Buffer[] = [];
      answer.on('data', (chunk: Buffer) => back.push(chunk));
      answer.on('error', () => res.destroy());
      answer.on('end', () => {
        const status = answer.statusCode ?? 502;
        const text = Buffer.concat(back);
        const seen = new Headers();
        for (let i = 0; i + 1 < answer.rawHeaders.length; i += 2) seen.append(answer.rawHeaders[i] ?? '', answer.rawHeaders[i + 1] ?? '');
        // Judged all the same, whatever the service does next.
        ended(status, seen, text.toString('utf8'));
        // The service hears back only once its time at receipt has been read (it may move on when it has).
        void stamped.then(() => {
          res.writeHead(status, answer.statusMessage, headerObject(forwardable(answer.rawHeaders, HOP_BY_HOP)));
          res.end(text);
        });
      });
    });
    out.on('error', (err) => {
      // Judged all the same: the service sent it, whatever became of it.
      ended(502, new Headers(), '');
      if (res.writableEnded || res.destroyed) return;
      context.log(`proxy: a callback for ${url.origin} could not be passed on (${err.message})`);
      // The service sees a failed delivery, as when its callback cannot reach the receiver, and retries it.
      void stamped.then(() => answerJson(res, 502, { error: { code: 'receiver_unreachable', message: `The proxy could not pass the callback on: ${err.message}` } }));
    });
    // The service gave up on the delivery: so does the proxy.
    res.on('close', () => {
      if (!res.writableFinished) out.destroy();
    });
    out.end(body);
  });
}

/** The headers a curl line that sends the callback again needs: as for an exchange, the transport's own left out. */
function curlHeaders(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name, value]) => !NOT_IN_CURL.test(name) && !(name === 'accept' && value === '*/*')));
}
