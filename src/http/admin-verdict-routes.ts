import { Router } from 'express';
import type { ProbeRequest } from '../service/index.ts';
import { adminQuery } from './admin-query.ts';
import type { AdminDeps } from './admin-routes.ts';
import { requireObjectBody } from './json-body.ts';
import { ROUTING } from './routing.ts';

/** The verdict on how a client coped, and the stale-timestamp probe of its receiver. */
export function adminVerdictRoutes({ contract, control }: AdminDeps): Router {
  const router = Router(ROUTING);

  router.get('/verdict', (req, res) => {
    const query = adminQuery(contract, 'getVerdict', req);
    res.json(
      control.verdict.judge({
        ...(query['key'] !== undefined ? { key: String(query['key']) } : {}),
        ...(query['account'] !== undefined ? { account: String(query['account']) } : {}),
      }),
    );
  });

  router.post('/verdict/probe', async (req, res) => {
    const body = contract.body<ProbeRequest>('admin', 'ProbeRequest', requireObjectBody(req));
    res.json(await control.verdict.probe(body));
  });

  return router;
}
