import type { Request, RequestHandler, Response } from 'express';
import { ApiError } from '../errors/index.ts';
import type { StoredAccount, StoredKey } from '../accounts/index.ts';
import type { Db } from '../db.ts';
import { contextOf } from './request-context.ts';

/**
 * `Authorization: Bearer <key>` on every /v1 route; `x-api-key` also on /v1/messages. A missing or unknown key
 * is 401 invalid_api_key (the reference leaves this answer "not shown").
 * @see reference "Authentication" 1 and 5
 */
export function apiKeyAuth(db: Pick<Db, 'accounts' | 'keys'>): RequestHandler {
  return (req, res, next) => {
    const key = keySent(req);
    // Shared and frozen: what a request does with its key and account past here reads them (a write reads its own
    // copy in its transaction), and one parse per change beats two per request.
    const stored = key ? db.keys.peek(key) : undefined;
    const account = stored ? db.accounts.peek(stored.account_id) : undefined;
    if (!key || !stored || !account) {
      throw new ApiError(
        'invalid_api_key',
        key ? 'The API key is not valid.' : 'Send the API key as Authorization: Bearer <API_KEY>.',
      );
    }
    const context = contextOf(res);
    context.key = stored;
    context.account = account;
    next();
  };
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** The token of an `Authorization: Bearer <token>` header's value, if it is one. */
export const bearerToken = (authorization: string | undefined): string | undefined => BEARER.exec(authorization ?? '')?.[1];

/** The token of `Authorization: Bearer <token>` (API key or admin token), if the request sends one. */
export const bearerOf = (req: Request): string | undefined => bearerToken(req.headers.authorization);

/**
 * The API key a /v1 request sends, known or not: its bearer token, or `x-api-key` on the Messages endpoint (what
 * authentication checks, and what the client log notes of a refused request too).
 */
export const keySent = (req: Request): string | undefined =>
  bearerOf(req) ?? (req.originalUrl.startsWith('/v1/messages') ? req.get('x-api-key') : undefined);

/** The account of an authenticated request (past `apiKeyAuth`). */
export const accountOf = (res: Response): StoredAccount => contextOf(res).account as StoredAccount;
/** The key of an authenticated request (past `apiKeyAuth`). */
export const keyOf = (res: Response): StoredKey => contextOf(res).key as StoredKey;
/** Who the request authenticated as, for the service's operations. */
export const callerOf = (res: Response): { account: StoredAccount; key: StoredKey } => ({ account: accountOf(res), key: keyOf(res) });
