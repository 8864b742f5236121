import type { AddressInfo } from 'node:net';
import type { RequestListener, Server } from 'node:http';
import { START_DEFAULTS } from '../defaults/index.ts';
import { expressBorn, refusals } from '../http/index.ts';
import { createLimitedServer, followRequests } from '../server/index.ts';
import type { ServerLimits } from '../server/index.ts';
import type { Host } from './host.ts';
import type { World } from './world.ts';

/** The listening server of one emulator: started by `listen`, stopped first at close. */
export interface Listener {
  server: Server | null;
  listen(port?: number, host?: string): Promise<string>;
  /** Stops listening, gives requests in flight the grace period, cuts the rest. */
  stop(hurry: () => void): Promise<void>;
}

export function listenerOf(host: Host, app: RequestListener, limits: ServerLimits, defaultWorld: () => World): Listener {
  let closeServer: ((graceMs: number) => Promise<number>) | null = null;
  const listener: Listener = {
    server: null,
    listen(port = START_DEFAULTS.port, address = START_DEFAULTS.host) {
      // Requests the server itself refuses (too large, too slow, not HTTP) are answered and recorded as the app's are,
      // in the default world: no key has said which world they are for.
      const world = defaultWorld();
      const refuse = refusals({ random: world.random, clock: world.clock, db: world.db, logger: host.logger });
      const server = createLimitedServer(app, limits, { warn: host.warn, refuse, classes: expressBorn(world.app) });
      closeServer = followRequests(server);
      listener.server = server;
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, address, () => {
          const bound = server.address() as AddressInfo;
          const shownHost = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
          const url = `http://${shownHost}:${bound.port}`;
          host.listening(url);
          resolve(url);
        });
      });
    },
    async stop(hurry) {
      // The app's paced waits end at once, so paced streams finish inside the grace period.
      hurry();
      if (!closeServer) return;
      const graceMs = host.options.shutdownGraceMs ?? START_DEFAULTS.shutdownGraceMs;
      const cut = await closeServer(graceMs);
      if (cut > 0) host.warn(`closing: ${cut} request(s) still unfinished after the ${graceMs} ms grace period were cut`);
      // A handler that saw its connection cut records that on its next turn; let it, before the last write.
      await new Promise((resolve) => setImmediate(resolve));
    },
  };
  return listener;
}
