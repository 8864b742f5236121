import type { RequestHandler } from 'express';
import { keyId } from '../log/index.ts';
import type { Logger } from '../log/index.ts';
import type { AppDeps } from './context.ts';
import { requestIdOf } from './request-id.ts';

/**
 * One log line per request once it is answered: request id, key id, method, path, status, latency. The
 * dashboard's own reads of the control API (it polls every few seconds, marked `X-Emulator-Client: dashboard`)
 * are logged at debug, so they do not drown the info log; its actions and any /v1 call stay at info.
 */
export function requestLog(deps: Pick<AppDeps, 'clock'>, logger: Logger): RequestHandler {
  return (req, res, next) => {
    const started = deps.clock.wallNow();
    res.once('close', () => {
      const key = res.locals['apiKey'] as { key: string } | undefined;
      const dashboardRead = req.method === 'GET' && req.originalUrl.startsWith('/_emulator/') && req.get('x-emulator-client') === 'dashboard';
      const level = dashboardRead ? 'debug' : 'info';
      logger[level](`${req.method} ${req.originalUrl.split('?')[0] ?? ''} ${res.statusCode}`, {
        request_id: requestIdOf(res),
        key: keyId(key?.key),
        status: res.statusCode,
        latency_ms: deps.clock.wallNow() - started,
        ...(res.locals['errorCode'] ? { error_code: res.locals['errorCode'] } : {}),
      });
    });
    next();
  };
}
