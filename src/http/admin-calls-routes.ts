import { Router } from 'express';
import { ROUTING } from './routing.ts';
import { ApiError } from '../errors/index.ts';
import type { AppDeps } from './context.ts';
import { entry } from '../store/index.ts';

/** Call records from the control API: by request id, or listed newest first with filters and pages. */
export function adminCallsRoutes(deps: AppDeps): Router {
  const { contract, store } = deps;
  const router = Router(ROUTING);

  router.get('/records', (req, res) => {
    const query = contract.parameters('listRecords', 'query', req.query as Record<string, unknown>, 'admin');
    const limit = Number(query['limit']);
    const skip = (Number(query['page']) - 1) * limit;
    const matches = [];
    const calls = store.peek().calls;
    // Newest first, stopping as soon as the page and one more are found.
    for (const id of deps.records.newestFirst()) {
      if (matches.length > skip + limit) break;
      const call = calls[id];
      if (!call) continue;
      if (query['account'] !== undefined && call.account_id !== query['account']) continue;
      if (query['key'] !== undefined && call.key !== query['key']) continue;
      if (query['path'] !== undefined && call.path !== query['path']) continue;
      if (query['status'] !== undefined && call.status !== query['status']) continue;
      if (query['model'] !== undefined && call.model !== query['model']) continue;
      if (query['error_code'] !== undefined && call.error_code !== query['error_code']) continue;
      matches.push(call);
    }
    res.json({
      object: 'list',
      data: matches.slice(skip, skip + limit),
      page: query['page'],
      limit,
      has_more: matches.length > skip + limit,
    });
  });

  router.get('/records/:id', (req, res) => {
    const call = entry(store.data.calls, req.params.id);
    if (!call) throw new ApiError('not_found', `No call record '${req.params.id}'.`);
    res.json(call);
  });

  return router;
}
