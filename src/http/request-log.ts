import type { Response } from 'express';
import { keyId } from '../log/index.ts';
import type { Logger } from '../log/index.ts';
import { endCall } from './call-records.ts';
import { noteClientRequest } from './client-log.ts';
import type { AppDeps } from './context.ts';
import { contextOf } from './request-context.ts';
import { latencyOf, requestIdOf } from './request-id.ts';

/**
 * What happens once a request is answered, or its connection closed without a whole answer (the listener
 * request-id.ts gives every request): a /v1 request's call record is written and the request noted in the client
 * log, then the request's log line.
 */
export function answerEnded(deps: Pick<AppDeps, 'clock' | 'db' | 'logger' | 'clientLog'>, options: { clientLog: boolean } = { clientLog: true }): (this: Response) => void {
  const { logger } = deps;
  return function (this: Response): void {
    endCall(deps, this);
    if (options.clientLog) noteClientRequest(deps, this);
    if (logger) requestLog(deps, logger, this);
  };
}

/**
 * One log line per request once it is answered: request id, key id, method, path, status, latency. The
 * dashboard's own reads of the control API (it polls every few seconds, marked `X-Emulator-Client: dashboard`)
 * are logged at debug, so they do not drown the info log; its actions and any /v1 call stay at info. Nothing is
 * built for a line the logger's level drops.
 */
export function requestLog(deps: Pick<AppDeps, 'clock'>, logger: Logger, res: Response): void {
  const { req } = res;
  const dashboardRead = req.method === 'GET' && req.originalUrl.startsWith('/_emulator/') && req.get('x-emulator-client') === 'dashboard';
  const level = dashboardRead ? 'debug' : 'info';
  if (logger.enabled?.(level) === false) return;
  const { key, errorCode } = contextOf(res);
  logger[level](`${req.method} ${req.originalUrl.split('?')[0] ?? ''} ${res.statusCode}`, {
    request_id: requestIdOf(res),
    key: keyId(key?.key),
    status: res.statusCode,
    latency_ms: latencyOf(deps, res),
    ...(errorCode ? { error_code: errorCode } : {}),
  });
}
