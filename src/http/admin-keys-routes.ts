import { Router } from 'express';
import { ROUTING } from './routing.ts';
import { createKey, findAccount } from '../accounts/index.ts';
import { ApiError } from '../errors/index.ts';
import { applySettings, keyView } from '../keys/index.ts';
import type { SettingsPatch } from '../keys/index.ts';
import { accountView } from './admin-routes.ts';
import type { AppDeps } from './context.ts';
import { requireObjectBody } from './json-body.ts';

/** Keys with their settings, and the account's own cap. @see reference "Authentication" 3 */
export function adminKeysRoutes(deps: AppDeps): Router {
  const { contract, db, clock } = deps;
  const router = Router(ROUTING);
  const keyOf = (key: string) => {
    const stored = db.keys.get(key);
    if (!stored) throw new ApiError('not_found', `No key '${key}'.`);
    return stored;
  };

  router.post('/accounts/:id/keys', (req, res) => {
    const patch = contract.body<SettingsPatch>('admin', 'CreateKeyRequest', req.body === undefined ? {} : requireObjectBody(req));
    const { key, secret } = db.store.transaction(() => {
      const account = findAccount(db, req.params.id);
      const created = createKey(db, deps.random, clock.now(), account.id);
      const signing = applySettings(created, patch, deps.random);
      db.keys.put(created);
      return { key: created, secret: signing };
    });
    res.status(201).json(keyView(key, clock.now(), secret));
  });

  router.get('/keys/:key', (req, res) => {
    res.json(keyView(keyOf(req.params.key), clock.now()));
  });

  router.patch('/keys/:key', (req, res) => {
    const patch = contract.body<SettingsPatch>('admin', 'KeySettings', requireObjectBody(req));
    const { key, secret } = db.store.transaction(() => {
      const stored = keyOf(req.params.key);
      const signing = applySettings(stored, patch, deps.random);
      db.keys.put(stored);
      return { key: stored, secret: signing };
    });
    res.json(keyView(key, clock.now(), secret));
  });

  router.patch('/accounts/:id', (req, res) => {
    const patch = contract.body<{ concurrency?: number | null }>('admin', 'AccountSettings', requireObjectBody(req));
    const account = db.store.transaction(() => {
      const stored = findAccount(db, req.params.id);
      if (patch.concurrency !== undefined) stored.concurrency = patch.concurrency;
      db.accounts.put(stored);
      return stored;
    });
    res.json(accountView(account));
  });

  return router;
}
