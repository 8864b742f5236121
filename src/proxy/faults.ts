import type { IncomingMessage, ServerResponse } from 'node:http';
import { answerInjectedError, shapeAnswer } from '../faults/index.ts';
import type { FaultRules } from '../faults/index.ts';
import { ids } from '../random/index.ts';
import type { Random } from '../random/index.ts';
import { keyOf } from './account.ts';
import type { DeploymentTime } from './deployment-time.ts';
import type { Injected } from '../wire/index.ts';
import type { ReadRequest } from './relay-routes.ts';

export interface ProxyFaultDeps {
  rules: FaultRules;
  random: Random;
  now: () => number;
  time: DeploymentTime;
  /** Real time: the proxy stands in front of a real service. */
  wait: (ms: number) => Promise<void>;
}

/**
 * Runs one `/v1` request past the fault rules (`proxy --faults FILE`). Its body is read whole first (a rule may
 * match on its model, and a reset comes after the request was read). An error is answered by the proxy and a reset
 * drops the connection: neither request reaches the service. Latency, a cut and a trickle shape the service's own
 * answer. `go` passes the request on, with the body already read.
 */
export function throughFaults(deps: ProxyFaultDeps, req: IncomingMessage, res: ServerResponse, go: (read: ReadRequest, injected: Injected | null) => void): void {
  const startedMs = deps.now();
  const sentMs = deps.time.before();
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('error', () => res.destroy());
  req.on('end', () => {
    const sent = Buffer.concat(chunks);
    const read: ReadRequest = { sent, body: sent, startedMs, sentMs };
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const hit = deps.rules.forRequest({ method: req.method ?? 'GET', path, key: keyOf(req.headers) ?? undefined, model: modelOf(sent) });
    if (!hit) return go(read, null);
    const injected = { rule: hit.rule.id, kind: hit.fault.kind };
    const { fault } = hit;
    switch (fault.kind) {
      case 'error':
        return answerInjectedError(res, path, fault, ids.requestId(deps.random));
      case 'reset':
        req.socket.destroy();
        return;
      case 'latency':
        if (!fault.between_chunks) {
          void deps.wait(fault.ms).then(() => (res.destroyed ? undefined : go(read, injected)));
          return;
        }
        shapeAnswer(res, fault, deps.wait);
        return go(read, injected);
      case 'cut':
      case 'trickle':
        shapeAnswer(res, fault, deps.wait);
        return go(read, injected);
    }
  });
}

/** The `model` of a JSON body, if it has one. */
function modelOf(body: Buffer): string | undefined {
  if (body.length === 0 || body[0] !== 0x7b) return undefined;
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { model?: unknown };
    return typeof parsed.model === 'string' ? parsed.model : undefined;
  } catch {
    return undefined;
  }
}
