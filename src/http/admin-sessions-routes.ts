import { Router } from 'express';
import type { NewSession, SessionsControl } from '../sessions/index.ts';
import { optionalBody } from './admin-query.ts';
import { ROUTING } from './routing.ts';

/**
 * Sessions, each a world of its own on this emulator: made with the emulator's admin token, listed with their
 * sizes and last use, ended. A session's own admin token sees only itself here.
 */
export function adminSessionsRoutes(sessions: SessionsControl): Router {
  const router = Router(ROUTING);

  router.post('/sessions', async (req, res) => {
    // Checked against CreateSessionRequest by `create`, which the in-process API calls too.
    res.status(201).json(await sessions.create(optionalBody(req) as NewSession));
  });

  router.get('/sessions', (_req, res) => {
    res.json(sessions.list());
  });

  router.get('/sessions/:id', (req, res) => {
    res.json(sessions.get(req.params.id));
  });

  router.delete('/sessions/:id', async (req, res) => {
    res.json(await sessions.delete(req.params.id));
  });

  return router;
}
