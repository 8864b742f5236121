import { Router } from 'express';
import { ROUTING } from './routing.ts';
import { findAccount } from '../accounts/index.ts';
import { formatTime } from '../clock/index.ts';
import { ApiError } from '../errors/index.ts';
import { webhookAddressProblemResolved } from '../webhooks/index.ts';
import { accountView } from './admin-routes.ts';
import type { AppDeps } from './context.ts';
import { requireObjectBody } from './json-body.ts';

/** Callback deliveries and account callback settings, from the control API. @see reference "Events" */
export function adminWebhooksRoutes(deps: AppDeps): Router {
  const { contract, store, webhooks } = deps;
  const router = Router(ROUTING);

  router.get('/webhooks/deliveries', (req, res) => {
    const query = contract.parameters('listDeliveries', 'query', req.query as Record<string, unknown>, 'admin');
    const data = Object.values(store.peek().deliveries).filter(
      (d) =>
        (query['task_id'] === undefined || d.task_id === query['task_id']) &&
        (query['account'] === undefined || d.account_id === query['account']),
    );
    res.json({ object: 'list', data: data.map(deliveryView) });
  });

  router.post('/webhooks/deliveries/:id/resend', async (req, res) => {
    res.json(deliveryView(await webhooks.resend(req.params.id)));
  });

  router.post('/accounts/:id/webhook', async (req, res) => {
    const account = findAccount(store.data, req.params.id);
    const body = contract.body<{ url: string | null }>('admin', 'SetWebhookRequest', requireObjectBody(req));
    if (body.url !== null) {
      const problem = await webhookAddressProblemResolved(body.url, deps.config.allowInsecureWebhooks, deps.resolveHost);
      if (problem) throw new ApiError('invalid_params', `url ${problem}`, [{ field: 'url', message: problem }]);
    }
    account.webhook_url = body.url;
    await deps.store.commit();
    res.json(accountView(account));
  });

  router.post('/accounts/:id/webhook/test', async (req, res) => {
    const delivery = await webhooks.sendTest(findAccount(store.data, req.params.id));
    res.json(deliveryView(delivery));
  });

  router.post('/accounts/:id/webhook/rotate', async (req, res) => {
    const account = findAccount(store.data, req.params.id);
    webhooks.rotate(account);
    await deps.store.commit();
    res.json(accountView(account));
  });

  return router;
}

function deliveryView(delivery: AppDeps['store']['data']['deliveries'][string]): Record<string, unknown> {
  const { next_attempt_ms, ...rest } = delivery;
  return { object: 'webhook_delivery', ...rest, next_attempt_at: next_attempt_ms === null ? null : formatTime(next_attempt_ms) };
}
