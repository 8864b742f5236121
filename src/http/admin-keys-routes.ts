import { Router } from 'express';
import type { SettingsPatch } from '../keys/index.ts';
import { optionalBody } from './admin-query.ts';
import type { AdminDeps } from './admin-routes.ts';
import { requireObjectBody } from './json-body.ts';
import { ROUTING } from './routing.ts';

/** Keys with their settings, and the account's own cap. @see reference "Authentication" 3 */
export function adminKeysRoutes({ contract, control }: AdminDeps): Router {
  const router = Router(ROUTING);

  router.post('/accounts/:id/keys', (req, res) => {
    const settings = contract.body<SettingsPatch>('admin', 'CreateKeyRequest', optionalBody(req));
    res.status(201).json(control.keys.create(req.params.id, settings));
  });

  router.get('/keys/:key', (req, res) => {
    res.json(control.keys.get(req.params.key));
  });

  router.patch('/keys/:key', (req, res) => {
    const settings = contract.body<SettingsPatch>('admin', 'KeySettings', requireObjectBody(req));
    res.json(control.keys.update(req.params.key, settings));
  });

  router.patch('/accounts/:id', (req, res) => {
    const patch = contract.body<{ concurrency?: number | null }>('admin', 'AccountSettings', requireObjectBody(req));
    res.json(control.accounts.update(req.params.id, patch));
  });

  return router;
}
