import { Router } from 'express';
import type { DeliveryOrder, StoredDelivery } from '../webhooks/index.ts';
import { adminQuery, pageQueryOf } from './admin-query.ts';
import type { AdminDeps } from './admin-routes.ts';
import { requireObjectBody } from './json-body.ts';
import { ROUTING } from './routing.ts';

/** Callback deliveries and account callback settings, from the control API. @see reference "Events" */
export function adminWebhooksRoutes({ contract, control }: AdminDeps): Router {
  const router = Router(ROUTING);

  router.get('/webhooks/deliveries', (req, res) => {
    const query = adminQuery(contract, 'listDeliveries', req);
    res.json(
      control.callbacks.list({
        ...pageQueryOf(query),
        ...(query['task_id'] !== undefined ? { task_id: String(query['task_id']) } : {}),
        ...(query['account'] !== undefined ? { account: String(query['account']) } : {}),
        ...(query['status'] !== undefined ? { status: query['status'] as StoredDelivery['status'] } : {}),
        ...(query['order'] !== undefined ? { order: query['order'] as DeliveryOrder } : {}),
      }),
    );
  });

  router.get('/webhooks/deliveries/:id', (req, res) => {
    res.json(control.callbacks.get(req.params.id));
  });

  router.post('/webhooks/deliveries/:id/resend', async (req, res) => {
    res.json(await control.callbacks.resend(req.params.id));
  });

  router.post('/accounts/:id/webhook', async (req, res) => {
    // An unknown account is 404 before its body is looked at.
    control.accounts.get(req.params.id);
    const body = contract.body<{ url: string | null }>('admin', 'SetWebhookRequest', requireObjectBody(req));
    res.json(await control.accounts.setWebhook(req.params.id, body.url));
  });

  router.post('/accounts/:id/webhook/test', async (req, res) => {
    res.json(await control.callbacks.test(req.params.id));
  });

  router.post('/accounts/:id/webhook/rotate', (req, res) => {
    res.json(control.accounts.rotateWebhookSecret(req.params.id));
  });

  return router;
}
