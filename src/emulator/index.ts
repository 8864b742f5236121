import { seedStore } from '../accounts/index.ts';
import { START_DEFAULTS } from '../defaults/index.ts';
import { createRandom, ids } from '../random/index.ts';
import { resolveLimits } from '../server/index.ts';
import { checkStoreFile, damageMessage, StoreDamageError, StoreOpenError } from '../store/index.ts';
import type { Store } from '../store/index.ts';
import { boot } from './boot.ts';
import { frontOf } from './front.ts';
import { createHost } from './host.ts';
import { listenerOf } from './listen.ts';
import { createSessions } from './sessions.ts';
import type { Emulator, EmulatorOptions, SessionHandle } from './types.ts';
import { buildWorld } from './world.ts';
import type { World } from './world.ts';

export type { Emulator, EmulatorInternals, EmulatorOptions, SessionHandle } from './types.ts';

/**
 * Builds a whole emulator in-process: the programmatic entry for test suites, and what `start` runs. A damaged
 * record that the start itself reads (an unfinished task it resumes, a pending callback) stops it with the
 * store check's lines naming each damaged table and row, as a StoreOpenError (one line, exit 2, from the CLI).
 */
export async function createEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
  let opened: Store | null = null;
  try {
    return await buildEmulator(options, (store) => (opened = store));
  } catch (err) {
    // A start that fails once the store is open lets it go: its lock, its checkpointer.
    await (opened as Store | null)?.close();
    if (!(err instanceof StoreDamageError) || !options.db) throw err;
    const problems = checkStoreFile(options.db);
    throw new StoreOpenError(damageMessage(options.db, problems.length > 0 ? problems : [err.where]));
  }
}

/**
 * One emulator: the worlds' shared host, the default world on the start's store, the sessions it lists, the
 * front that routes each request to its world, and the listener. Closing stops them in reverse.
 */
async function buildEmulator(options: EmulatorOptions, opened: (store: Store) => void): Promise<Emulator> {
  const host = createHost(options);
  // Checked now, so that bad limits fail the start rather than the first listen.
  const limits = resolveLimits(options.limits);
  const booted = await boot(host, opened);
  const adminToken = options.adminToken ?? ids.adminToken(createRandom());
  let world: World | null = null;
  const defaultWorld = (): World => world as World;
  const sessions = createSessions({ host, defaultWorld, store: booted.store, mainToken: adminToken, ...(options.sessionsClock ? { clock: options.sessionsClock } : {}) });
  world = buildWorld(host, {
    store: booted.store,
    filesDir: booted.filesDir,
    adminTokens: [adminToken],
    clock: { mode: options.clock ?? START_DEFAULTS.clock, ...(options.speed !== undefined ? { speed: options.speed } : {}), ...(options.startTime !== undefined ? { startTime: options.startTime } : {}) },
    ...(options.seed !== undefined ? { seed: options.seed } : {}),
    seedAccounts: (db, random, nowMs) => seedStore(db, random, nowMs),
    faults: booted.faults,
    ...(options.exportOnExit !== undefined ? { exportOnExit: options.exportOnExit } : {}),
    sessions: sessions.control,
    keyElsewhere: (key) => sessions.keyElsewhere(key),
  });
  const started = world;
  try {
    sessions.restore();
  } catch (err) {
    await sessions.close();
    await started.close();
    throw err;
  }
  const app = frontOf(defaultWorld, sessions, adminToken);
  const listener = listenerOf(host, app, limits, defaultWorld);
  let closing: Promise<void> | null = null;
  const emulator: Emulator = {
    app,
    control: started.control,
    clock: started.clock,
    adminToken,
    internals: { store: started.store, db: started.db, engine: started.engine, contract: host.contract },
    verdict: (filter) => started.control.verdict.judge(filter),
    get server() {
      return listener.server;
    },
    listen: (port, address) => listener.listen(port, address),
    createSession: async (input = {}) => sessionHandle(await sessions.control.create(input), sessions),
    sessions: sessions.control,
    close() {
      // Closing twice (a signal and a test's afterEach) shares one shutdown and writes once. The server first,
      // the sessions next, the default world (and its store) last.
      closing ??= (async () => {
        await listener.stop(() => {
          started.hurry();
          sessions.hurry();
        });
        await sessions.close();
        await started.close();
      })();
      return closing;
    },
  };
  return emulator;
}

function sessionHandle(created: Awaited<ReturnType<ReturnType<typeof createSessions>['control']['create']>>, sessions: ReturnType<typeof createSessions>): SessionHandle {
  const session = sessions.byId(created.id);
  if (!session) throw new Error(`session ${created.id} ended as it was made`);
  const { world } = session;
  return {
    id: created.id,
    name: created.name,
    key: created.key,
    accountId: String(created.account['id'] ?? ''),
    webhookSecret: created.webhook_secret,
    adminToken: created.admin_token,
    control: world.control,
    clock: world.clock,
    verdict: (filter) => world.control.verdict.judge(filter),
    reset: () => world.control.reset(),
    dispose: async () => {
      if (sessions.byId(created.id)) await sessions.control.delete(created.id);
    },
  };
}
