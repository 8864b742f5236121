import { Router } from 'express';
import type { FaultFile } from '../faults/index.ts';
import type { AdminDeps } from './admin-routes.ts';
import { requireObjectBody } from './json-body.ts';
import { ROUTING } from './routing.ts';

/** Faults injected at run time into /v1 requests and callbacks: added, listed with their counts, removed. */
export function adminFaultsRoutes({ contract, control }: AdminDeps): Router {
  const router = Router(ROUTING);

  router.get('/faults', (_req, res) => {
    res.json(control.faults.list());
  });

  router.post('/faults', (req, res) => {
    const body = contract.body<FaultFile>('admin', 'AddFaultsRequest', requireObjectBody(req));
    res.status(201).json(control.faults.add(body));
  });

  router.delete('/faults', (_req, res) => {
    res.json(control.faults.clear());
  });

  router.delete('/faults/:id', (req, res) => {
    res.json(control.faults.remove(req.params.id));
  });

  return router;
}
