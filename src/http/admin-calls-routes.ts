import { Router } from 'express';
import type { RecordListQuery } from '../service/index.ts';
import { adminQuery, pageQueryOf } from './admin-query.ts';
import type { AdminDeps } from './admin-routes.ts';
import { ROUTING } from './routing.ts';

/** Call records from the control API: by request id, or listed newest first with filters and pages. */
export function adminCallsRoutes({ contract, control }: AdminDeps): Router {
  const router = Router(ROUTING);

  router.get('/records', (req, res) => {
    const query = adminQuery(contract, 'listRecords', req);
    const filter: RecordListQuery = {};
    for (const field of ['account', 'key', 'path', 'model', 'error_code'] as const) {
      if (query[field] !== undefined) filter[field] = String(query[field]);
    }
    if (query['status'] !== undefined) filter.status = Number(query['status']);
    res.json(control.records.list({ ...pageQueryOf(query), ...filter }));
  });

  router.get('/records/:id', (req, res) => {
    res.json(control.records.get(req.params.id));
  });

  return router;
}
