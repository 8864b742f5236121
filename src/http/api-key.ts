import type { RequestHandler, Response } from 'express';
import { accountForKey } from '../accounts/index.ts';
import { ApiError } from '../errors/index.ts';
import type { Store, StoredAccount, StoredKey } from '../store/index.ts';

/**
 * `Authorization: Bearer <key>` on every /v1 route; `x-api-key` also on /v1/messages. A missing or unknown key
 * is 401 invalid_api_key (the reference leaves this answer "not shown").
 * @see reference "Authentication" 1 and 5
 */
export function apiKeyAuth(store: Store): RequestHandler {
  return (req, res, next) => {
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(req.get('authorization') ?? '')?.[1];
    const key = bearer ?? (req.path.startsWith('/messages') ? req.get('x-api-key') : undefined);
    const account = key ? accountForKey(store.data, key) : undefined;
    if (!key || !account) {
      throw new ApiError(
        'invalid_api_key',
        key ? 'The API key is not valid.' : 'Send the API key as Authorization: Bearer <API_KEY>.',
      );
    }
    res.locals['apiKey'] = store.data.keys[key];
    res.locals['account'] = account;
    next();
  };
}

export const accountOf = (res: Response): StoredAccount => res.locals['account'] as StoredAccount;
export const keyOf = (res: Response): StoredKey => res.locals['apiKey'] as StoredKey;
