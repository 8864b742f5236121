import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { accountOf } from './account.ts';
import { relayDelivery } from './deliveries.ts';
import type { Relayed } from './deliveries.ts';
import { answerJson } from './headers.ts';
import type { DeploymentTime } from './deployment-time.ts';
import type { Relay, SigningSecrets } from './relay.ts';
import type { Injected } from '../wire/index.ts';

/**
 * A request whose body the proxy read whole before passing it on: `sent` as the client sent it (what the checks
 * and the recorder see), `body` as it goes on, and when it arrived (machine ms, and the deployment's time as read
 * then: it goes on once that reading is done).
 */
export interface ReadRequest {
  sent: Buffer;
  body: Buffer;
  startedMs: number;
  sentMs: number | Promise<number>;
  /** A submission whose `webhook_url` the relay replaced: its task's callback comes through the proxy. */
  relayed?: boolean;
}

export interface RelayDeps {
  /** The proxy's address as the service reaches it; null until known. */
  ownBase: () => string | null;
  forward: (req: IncomingMessage, res: ServerResponse, read?: ReadRequest, injected?: Injected | null) => void;
  now: () => number;
  time: DeploymentTime;
  /** The secrets the callbacks of a submission with these headers are checked with; undefined: not checked. */
  signing: (headers: IncomingHttpHeaders) => SigningSecrets | undefined;
  log: (line: string) => void;
  /** A callback has come: judge it once it has been passed on (or could not be). */
  relayed: (delivery: Promise<Relayed>) => void;
  /** A callback has come, with this raw body: as soon as it is read, before it is passed on. */
  arrived?: (body: Buffer) => void;
}

/** The proxy's two routes of the callback relay: task submissions, and the callbacks that come back. */
export function relayRoutes(
  relay: Relay,
  deps: RelayDeps,
): { submit(req: IncomingMessage, res: ServerResponse, read?: ReadRequest, injected?: Injected | null): void; deliver(req: IncomingMessage, res: ServerResponse, token: string): void } {
  let warnedSigned = false;
  return {
    /**
     * A task submission: read whole, its `webhook_url` replaced by the proxy's own address, then passed on. A
     * signed request goes on as it is (a changed body would no longer match its signature), and so does a
     * compressed one.
     */
    submit(req, res, read, injected = null) {
      const signed = req.headers['x-svc-signature'] !== undefined;
      if (signed || (req.headers['content-encoding'] ?? 'identity') !== 'identity') {
        if (signed && !warnedSigned) {
          warnedSigned = true;
          deps.log('proxy: a signed task submission keeps its webhook_url (changing the body would break its signature): its callback does not pass through the proxy');
        }
        return deps.forward(req, res, read, injected);
      }
      const rewrite = (sent: Buffer, startedMs: number, sentMs: ReadRequest['sentMs']): void => {
        const account = accountOf(req.headers);
        const base = deps.ownBase();
        const secrets = deps.signing(req.headers);
        const body = account === null || base === null ? null : relay.rewrite(sent, { account, ...(secrets ? { secrets } : {}) }, base);
        deps.forward(req, res, { sent, body: body ?? sent, startedMs, sentMs, ...(body ? { relayed: true } : {}) }, injected);
      };
      // Read already (the fault rules read every body first).
      if (read) return rewrite(read.sent, read.startedMs, read.sentMs);
      const startedMs = deps.now();
      const sentMs = deps.time.before();
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('error', () => res.destroy());
      req.on('end', () => rewrite(Buffer.concat(chunks), startedMs, sentMs));
    },
    /** A callback for one of the addresses given out: passed on to the original; an unknown token is 404. */
    deliver(req, res, token) {
      const target = relay.target(token);
      if (!target || req.method !== 'POST') {
        req.resume();
        answerJson(res, 404, { error: { code: 'not_found', message: 'This proxy relays no callback to this address (an unknown token, or one long forgotten).' } });
        return;
      }
      relayDelivery(req, res, target, { now: () => deps.time.after(), wallNow: deps.now, log: deps.log, ...(deps.arrived ? { arrived: deps.arrived } : {}) }, deps.relayed);
    },
  };
}
