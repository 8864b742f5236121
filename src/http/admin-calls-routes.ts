import { Router } from 'express';
import { ROUTING } from './routing.ts';
import { ApiError } from '../errors/index.ts';
import { listPage } from './admin-routes.ts';
import type { AppDeps } from './context.ts';
import type { CallFilter } from '../calls/index.ts';

/** Call records from the control API: by request id, or listed newest first with filters and pages. */
export function adminCallsRoutes(deps: AppDeps): Router {
  const { contract, db } = deps;
  const router = Router(ROUTING);

  router.get('/records', (req, res) => {
    const query = contract.parameters('listRecords', 'query', req.query as Record<string, unknown>, 'admin');
    const limit = Number(query['limit']);
    const filter: CallFilter = {};
    for (const field of ['account', 'key', 'path', 'model', 'error_code'] as const) {
      if (query[field] !== undefined) filter[field] = String(query[field]);
    }
    if (query['status'] !== undefined) filter.status = Number(query['status']);
    const { rows, hasMore } = db.calls.page(filter, limit, (Number(query['page']) - 1) * limit);
    res.json(listPage(rows, query, { page: query['page'], limit, has_more: hasMore }));
  });

  router.get('/records/:id', (req, res) => {
    const call = db.calls.get(req.params.id);
    if (!call) throw new ApiError('not_found', `No call record '${req.params.id}'.`);
    res.json(call);
  });

  return router;
}
