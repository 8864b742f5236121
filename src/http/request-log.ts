import type { RequestHandler } from 'express';
import { keyId } from '../log/index.ts';
import type { Logger } from '../log/index.ts';
import type { AppDeps } from './context.ts';
import { requestIdOf } from './request-id.ts';

/** One log line per request once it is answered: request id, key id, method, path, status, latency. */
export function requestLog(deps: Pick<AppDeps, 'clock'>, logger: Logger): RequestHandler {
  return (req, res, next) => {
    const started = deps.clock.wallNow();
    res.once('close', () => {
      const key = res.locals['apiKey'] as { key: string } | undefined;
      logger.info(`${req.method} ${req.originalUrl.split('?')[0] ?? ''} ${res.statusCode}`, {
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
