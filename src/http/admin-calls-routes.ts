import { Router } from 'express';
import { ApiError } from '../errors/index.ts';
import type { AppDeps } from './context.ts';

/** Call records from the control API: by request id, or listed newest first with filters. */
export function adminCallsRoutes(deps: AppDeps): Router {
  const { contract, store } = deps;
  const router = Router();

  router.get('/calls', (req, res) => {
    const query = contract.parameters('listCalls', 'query', req.query as Record<string, unknown>, 'admin');
    const limit = Number(query['limit']);
    const matches = [];
    const all = Object.values(store.data.calls);
    for (let i = all.length - 1; i >= 0 && matches.length < limit; i--) {
      const call = all[i];
      if (!call) continue;
      if (query['account'] !== undefined && call.account_id !== query['account']) continue;
      if (query['path'] !== undefined && call.path !== query['path']) continue;
      if (query['status'] !== undefined && call.status !== query['status']) continue;
      matches.push(call);
    }
    res.json({ object: 'list', data: matches });
  });

  router.get('/calls/:id', (req, res) => {
    const call = Object.hasOwn(store.data.calls, req.params.id) ? store.data.calls[req.params.id] : undefined;
    if (!call) throw new ApiError('not_found', `No call record '${req.params.id}'.`);
    res.json(call);
  });

  return router;
}
