import { Router } from 'express';
import { ROUTING } from './routing.ts';
import { findAccount } from '../accounts/index.ts';
import { formatTime } from '../clock/index.ts';
import { ApiError } from '../errors/index.ts';
import { webhookAddressProblemResolved } from '../webhooks/index.ts';
import type { StoredDelivery } from '../webhooks/index.ts';
import { accountView } from './admin-routes.ts';
import type { AppDeps } from './context.ts';
import { requireObjectBody } from './json-body.ts';

/** Callback deliveries and account callback settings, from the control API. @see reference "Events" */
export function adminWebhooksRoutes(deps: AppDeps): Router {
  const { contract, db, webhooks } = deps;
  const router = Router(ROUTING);

  router.get('/webhooks/deliveries', (req, res) => {
    const query = contract.parameters('listDeliveries', 'query', req.query as Record<string, unknown>, 'admin');
    const filter = {
      ...(query['task_id'] !== undefined ? { taskId: String(query['task_id']) } : {}),
      ...(query['account'] !== undefined ? { accountId: String(query['account']) } : {}),
    };
    // Oldest first, as the listing has always been; every message of the filter.
    const data = db.deliveries.list(filter, Number.MAX_SAFE_INTEGER, 0).rows.reverse();
    res.json({ object: 'list', data: data.map(deliveryView) });
  });

  router.post('/webhooks/deliveries/:id/resend', async (req, res) => {
    res.json(deliveryView(await webhooks.resend(req.params.id)));
  });

  router.post('/accounts/:id/webhook', async (req, res) => {
    findAccount(db, req.params.id);
    const body = contract.body<{ url: string | null }>('admin', 'SetWebhookRequest', requireObjectBody(req));
    if (body.url !== null) {
      const problem = await webhookAddressProblemResolved(body.url, deps.config.allowInsecureWebhooks, deps.resolveHost);
      if (problem) throw new ApiError('invalid_params', `url ${problem}`, [{ field: 'url', message: problem }]);
    }
    const account = db.store.transaction(() => {
      const stored = findAccount(db, req.params.id);
      stored.webhook_url = body.url;
      db.accounts.put(stored);
      return stored;
    });
    res.json(accountView(account));
  });

  router.post('/accounts/:id/webhook/test', async (req, res) => {
    const delivery = await webhooks.sendTest(req.params.id);
    res.json(deliveryView(delivery));
  });

  router.post('/accounts/:id/webhook/rotate', (req, res) => {
    const account = db.store.transaction(() => webhooks.rotate(findAccount(db, req.params.id)));
    res.json(accountView(account));
  });

  return router;
}

function deliveryView(delivery: StoredDelivery): Record<string, unknown> {
  const { next_attempt_ms, created_ms: _created, ...rest } = delivery;
  return { object: 'webhook_delivery', ...rest, next_attempt_at: next_attempt_ms === null ? null : formatTime(next_attempt_ms) };
}
