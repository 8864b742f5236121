import { Router } from 'express';
import { ROUTING } from './routing.ts';
import { createKey, findAccount } from '../accounts/index.ts';
import { ApiError } from '../errors/index.ts';
import { applySettings, keyView } from '../keys/index.ts';
import type { SettingsPatch } from '../keys/index.ts';
import { accountView } from './admin-routes.ts';
import type { AppDeps } from './context.ts';
import { requireObjectBody } from './json-body.ts';
import { entry } from '../store/index.ts';

/** Keys with their settings, and the account's own cap. @see reference "Authentication" 3 */
export function adminKeysRoutes(deps: AppDeps): Router {
  const { contract, store, clock } = deps;
  const router = Router(ROUTING);
  const keyOf = (key: string) => {
    const stored = entry(store.data.keys, key);
    if (!stored) throw new ApiError('not_found', `No key '${key}'.`);
    return stored;
  };

  router.post('/accounts/:id/keys', async (req, res) => {
    const account = findAccount(store.data, req.params.id);
    const patch = contract.body<SettingsPatch>('admin', 'CreateKeyRequest', req.body === undefined ? {} : requireObjectBody(req));
    const key = createKey(store.data, deps.random, clock.now(), account.id);
    const secret = applySettings(key, patch, deps.random);
    await deps.store.commit();
    res.status(201).json(keyView(key, clock.now(), secret));
  });

  router.get('/keys/:key', (req, res) => {
    res.json(keyView(keyOf(req.params.key), clock.now()));
  });

  router.patch('/keys/:key', async (req, res) => {
    const key = keyOf(req.params.key);
    const patch = contract.body<SettingsPatch>('admin', 'KeySettings', requireObjectBody(req));
    const secret = applySettings(key, patch, deps.random);
    await deps.store.commit();
    res.json(keyView(key, clock.now(), secret));
  });

  router.patch('/accounts/:id', async (req, res) => {
    const account = findAccount(store.data, req.params.id);
    const patch = contract.body<{ concurrency?: number | null }>('admin', 'AccountSettings', requireObjectBody(req));
    if (patch.concurrency !== undefined) account.concurrency = patch.concurrency;
    await deps.store.commit();
    res.json(accountView(account));
  });

  return router;
}
