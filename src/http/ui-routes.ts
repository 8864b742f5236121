import { readFile } from 'node:fs/promises';
import { Router } from 'express';
import { optionsTo, ROUTING } from './routing.ts';
import type { RequestHandler } from 'express';
import { dashboardSignInRoutes } from './dashboard-sign-in.ts';
import type { DashboardSignIns } from './dashboard-sign-in.ts';

/**
 * The package's top-level `ui/` folder; `../../ui/` is right from both src/http (tsx) and dist/http (the build),
 * since tsc copies no static files.
 */
const UI_DIR = new URL('../../ui/', import.meta.url);

const SCRIPT = 'text/javascript; charset=utf-8';

/** Every file of the page; nothing else under ui/ is served. The scripts are ES modules the page imports. */
const FILES: Readonly<Record<string, string>> = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': SCRIPT,
  'api.js': SCRIPT,
  'dom.js': SCRIPT,
  'curl.js': SCRIPT,
  'scenarios.js': SCRIPT,
  'accounts.js': SCRIPT,
  'actions.js': SCRIPT,
  'callbacks.js': SCRIPT,
  'clock.js': SCRIPT,
  'details.js': SCRIPT,
  'faults.js': SCRIPT,
  'fault-form.js': SCRIPT,
  'filters.js': SCRIPT,
  'labels.js': SCRIPT,
  'ledger.js': SCRIPT,
  'links.js': SCRIPT,
  'messages.js': SCRIPT,
  'outputs.js': SCRIPT,
  'overview.js': SCRIPT,
  'records.js': SCRIPT,
  'refresher.js': SCRIPT,
  'search.js': SCRIPT,
  'session.js': SCRIPT,
  'store.js': SCRIPT,
  'tasks.js': SCRIPT,
  'verdict.js': SCRIPT,
  'worlds.js': SCRIPT,
  'style.css': 'text/css; charset=utf-8',
};

// The page loads only its own files and talks only to this emulator.
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * The dashboard under /_emulator/ui: static files that hold no data, so they need no token; the page asks for
 * the admin token and sends it on its own calls to the control API, and keeps it with the emulator (sign-in).
 */
export function uiRoutes(signIns: DashboardSignIns, adminTokens: readonly string[], noRoute: RequestHandler): Router {
  const router = Router(ROUTING);
  // Express would answer OPTIONS itself; here it is a wrong method like any other.
  router.use(optionsTo(noRoute));
  router.use(dashboardSignInRoutes(signIns, adminTokens));
  const serve =
    (name: string, type: string): RequestHandler =>
    async (_req, res) => {
      // Read on each request: a few kilobytes from the page cache, and an edited page shows on reload.
      const body = await readFile(new URL(name, UI_DIR));
      res.set({
        'Content-Type': type,
        'Cache-Control': 'no-cache',
        'X-Content-Type-Options': 'nosniff',
        'Content-Security-Policy': CONTENT_SECURITY_POLICY,
        'Referrer-Policy': 'no-referrer',
      });
      res.send(body);
    };
  for (const [name, type] of Object.entries(FILES)) {
    router.get(`/${name}`, serve(name, type));
    if (name === 'index.html') router.get('/', serve(name, type));
  }
  router.use(noRoute);
  return router;
}
