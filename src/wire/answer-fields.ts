import type { Exchange } from './exchange.ts';

/** Points on the wire: a string with three decimals, never negative (a balance, which may be, is no /v1 field). */
export const POINTS = /^\d+\.\d{3}$/;

/** An X-Request-Id of the documented form. */
export const REQUEST_ID = /^req_[a-z0-9]{24}$/;

/** The error code and message of an answer, in the general shape or the Messages one; empty when it has none. */
export function errorOf(exchange: Pick<Exchange, 'json'>): { code?: string; message?: string } {
  const error = (exchange.json as { error?: { code?: unknown; type?: unknown; message?: unknown } } | undefined)?.error;
  const code = typeof error?.code === 'string' ? error.code : typeof error?.type === 'string' ? error.type : undefined;
  const message = typeof error?.message === 'string' ? error.message : undefined;
  return { ...(code !== undefined ? { code } : {}), ...(message !== undefined ? { message } : {}) };
}
