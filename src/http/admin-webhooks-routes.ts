import { Router } from 'express';
import { ROUTING } from './routing.ts';
import { findAccount } from '../accounts/index.ts';
import { formatTime } from '../clock/index.ts';
import { ApiError } from '../errors/index.ts';
import type { StoredAccount } from '../accounts/index.ts';
import { attemptRequestHeaders, webhookAddressProblemResolved } from '../webhooks/index.ts';
import type { DeliveryFilter, DeliveryOrder, StoredDelivery } from '../webhooks/index.ts';
import { accountView, listPage } from './admin-routes.ts';
import type { AppDeps } from './context.ts';
import { requireObjectBody } from './json-body.ts';

/** Callback deliveries and account callback settings, from the control API. @see reference "Events" */
export function adminWebhooksRoutes(deps: AppDeps): Router {
  const { contract, db, webhooks } = deps;
  const router = Router(ROUTING);
  const view = (delivery: StoredDelivery): Record<string, unknown> => deliveryView(delivery, db.accounts.get(delivery.account_id));

  router.get('/webhooks/deliveries', (req, res) => {
    const query = contract.parameters('listDeliveries', 'query', req.query as Record<string, unknown>, 'admin');
    const filter: DeliveryFilter = {
      ...(query['task_id'] !== undefined ? { taskId: String(query['task_id']) } : {}),
      ...(query['account'] !== undefined ? { accountId: String(query['account']) } : {}),
      ...(query['status'] !== undefined ? { status: query['status'] as StoredDelivery['status'] } : {}),
    };
    const page = Number(query['page']);
    // Without a limit, every message of the filter (as the listing has always been).
    const limit = query['limit'] === undefined ? null : Number(query['limit']);
    const offset = limit === null ? 0 : (page - 1) * limit;
    const { rows, hasMore } = db.deliveries.list(filter, limit ?? Number.MAX_SAFE_INTEGER, offset, query['order'] as DeliveryOrder);
    res.json(listPage(rows.map(view), query, { page, limit, has_more: hasMore }));
  });

  router.get('/webhooks/deliveries/:id', (req, res) => {
    const delivery = db.deliveries.get(req.params.id);
    if (!delivery) throw new ApiError('not_found', `No callback message '${req.params.id}'.`);
    res.json(view(delivery));
  });

  router.post('/webhooks/deliveries/:id/resend', async (req, res) => {
    res.json(view(await webhooks.resend(req.params.id)));
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
    res.json(view(delivery));
  });

  router.post('/accounts/:id/webhook/rotate', (req, res) => {
    const account = db.store.transaction(() => webhooks.rotate(findAccount(db, req.params.id)));
    res.json(accountView(account));
  });

  return router;
}

/**
 * A message as the control API shows it; each attempt with the headers it was sent with (the body, sent
 * unchanged on every attempt, is the message's).
 */
function deliveryView(delivery: StoredDelivery, account: StoredAccount | undefined): Record<string, unknown> {
  const { next_attempt_ms, created_ms: _created, ...rest } = delivery;
  return {
    object: 'webhook_delivery',
    ...rest,
    attempts: delivery.attempts.map((attempt) => {
      // The signature kept with the attempt is shown among its headers, not beside them.
      const { webhook_signature: _kept, ...shown } = attempt;
      return { ...shown, request_headers: attemptRequestHeaders(delivery, attempt, account) };
    }),
    next_attempt_at: next_attempt_ms === null ? null : formatTime(next_attempt_ms),
  };
}
