import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { bearerToken } from '../http/index.ts';
import type { Sessions } from './sessions.ts';
import type { SessionWorld } from './session-world.ts';
import type { World } from './world.ts';

/** The header with which the emulator's admin token steers one session's world (the dashboard's picker). */
export const SESSION_HEADER = 'x-emulator-session';

/**
 * Every request reaches exactly one world: a /v1 request the world of its key, a control request the world of its
 * token (the emulator's token with `X-Emulator-Session`: that session's), a file the world that holds it, anything
 * else (and whatever names no session) the default world, which answers it as it always has.
 */
export function frontOf(defaultWorld: () => World, sessions: Sessions, mainToken: string): RequestListener {
  const route = (req: IncomingMessage): SessionWorld | null => {
    const url = req.url ?? '';
    const token = bearerToken(req.headers.authorization);
    if (url.startsWith('/v1/')) {
      const key = token ?? (url.startsWith('/v1/messages') ? headerOf(req, 'x-api-key') : undefined);
      // Peeked (the stored key as parsed once per change), not read: every /v1 request asks while sessions exist.
      return key === undefined || defaultWorld().db.keys.peek(key) ? null : sessions.forKey(key);
    }
    if (url.startsWith('/_emulator/')) {
      if (token === undefined) return null;
      const own = sessions.forToken(token);
      if (own) return own;
      const named = headerOf(req, SESSION_HEADER);
      return named !== undefined && token === mainToken ? sessions.byId(named) : null;
    }
    if (url.startsWith('/files/')) return sessions.forFile(url.slice('/files/'.length).split(/[?#]/)[0] ?? '');
    return null;
  };
  return (req: IncomingMessage, res: ServerResponse) => {
    const session = sessions.size === 0 ? null : route(req);
    if (!session) return defaultWorld().app(req, res);
    // The dashboard's polling is someone watching, not a client using the session: it does not keep one alive.
    if (req.headers['x-emulator-client'] !== 'dashboard') sessions.touch(session);
    // Consumed here when it names the world routed to: a world refuses a request that still names a session, one it
    // does not know (none, or another session seen with this one's token: 404 as for any id not its own).
    if (req.headers[SESSION_HEADER] === session.record.id) delete req.headers[SESSION_HEADER];
    return session.world.app(req, res);
  };
}

const headerOf = (req: IncomingMessage, name: string): string | undefined => {
  const value = req.headers[name];
  return typeof value === 'string' ? value : undefined;
};
