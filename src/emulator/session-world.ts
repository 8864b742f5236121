import { rmSync } from 'node:fs';
import { readSeed, seedStore } from '../accounts/index.ts';
import { repositories } from '../db.ts';
import type { Db } from '../db.ts';
import type { SessionsControl } from '../http/index.ts';
import { toPoints } from '../points/index.ts';
import { ids } from '../random/index.ts';
import type { Random } from '../random/index.ts';
import { sessionPaths } from '../sessions/index.ts';
import type { SeededAccount, SessionAccountInput, SessionRecord } from '../sessions/index.ts';
import { checkStateDocument, importState } from '../state/index.ts';
import type { StateDocument } from '../state/index.ts';
import { openStore } from '../store/index.ts';
import type { Store } from '../store/index.ts';
import type { Host } from './host.ts';
import { buildWorld } from './world.ts';
import type { World } from './world.ts';

/** What a session's world asks of the emulator's other worlds. */
export interface SessionHooks {
  sessions: SessionsControl;
  keyElsewhere: (key: string) => boolean;
}

/** A session's world, and what else is its own: its record and where its files live. */
export interface SessionWorld {
  record: SessionRecord;
  world: World;
  /** Host-clock epoch ms of the last request routed to it (or its creation, or this start). */
  lastUsedMs: number;
  /** Closes the world and, when `remove`, deletes its store and files. */
  end(remove: boolean): Promise<void>;
}

const DEMO_POINTS = (): string => readSeed().accounts[0]?.points ?? '100000.000';
/** Where a session made from a state document keeps it, in its own store: its reset imports it again. */
const RESET_STATE = 'reset_state';

/**
 * The accounts a new session is seeded with: those it asked for, else one demo account of the shipped seed's
 * points. Ids and webhook secrets come from `random` (the session's seed, when it has one: repeatable); keys always
 * from `keys`, unseeded, since a key says which world a request is for and two sessions of one seed must not share it.
 */
export function drawAccounts(random: Random, keys: Random, asked: readonly SessionAccountInput[] | undefined): SeededAccount[] {
  return (asked ?? [{}]).map((spec) => ({
    id: ids.accountId(random),
    points: toPoints(spec.points ?? DEMO_POINTS()),
    webhook_url: spec.webhook_url ?? null,
    webhook_secret: ids.webhookSecret(random),
    keys: [ids.apiKey(keys)],
  }));
}

/** Fills a session's empty or wiped store: its drawn accounts, or its state document again (checked again: stored input). */
const seedSession = (host: Host, store: Store, record: SessionRecord) => (db: Db, random: Random, nowMs: number): void => {
  if (record.accounts) return seedStore(db, random, nowMs, { accounts: record.accounts });
  const document = store.meta.get<unknown>(RESET_STATE);
  if (document !== undefined) importState(db, checkStateDocument(host.contract, document));
};

/**
 * Opens (or creates) a session's store beside the default one, and builds its world: the emulator's admin token
 * reaches it besides its own. A state document, on a new session, fills the store before anything starts.
 */
export function openSessionWorld(host: Host, defaultStore: string | null, record: SessionRecord, hooks: SessionHooks, mainToken: string, fresh?: { state?: StateDocument; startTime?: string }): SessionWorld {
  const paths = sessionPaths(defaultStore, record.id);
  const { options } = host;
  // A session's store is small and idle most of its life: SQLite's own checkpoints, no worker of its own.
  const store = openStore({ ...(paths ? { path: paths.store } : {}), sync: options.storeSync ?? false, check: false, checkpointWorker: false, guardedByParent: true, onEffectError: (err) => host.log(`an effect after a commit failed: ${String((err as Error)?.stack ?? err)}`) });
  let world: World;
  try {
    if (fresh?.state) {
      const state = fresh.state;
      store.transaction(() => {
        importState(repositories(store), state);
        store.meta.set(RESET_STATE, state);
      });
    }
    world = buildWorld(host, {
      store,
      filesDir: paths?.files ?? null,
      adminTokens: [record.admin_token, mainToken],
      clock: { mode: record.clock.mode, speed: record.clock.speed, ...(fresh?.startTime !== undefined ? { startTime: fresh.startTime } : {}) },
      ...(record.seed !== null ? { seed: record.seed } : {}),
      seedAccounts: seedSession(host, store, record),
      faults: record.faults,
      sessions: hooks.sessions,
      keyElsewhere: hooks.keyElsewhere,
    });
  } catch (err) {
    void store.close();
    throw err;
  }
  return {
    record,
    world,
    lastUsedMs: 0,
    async end(remove) {
      await world.close();
      if (remove && paths) rmSync(paths.dir, { recursive: true, force: true });
    },
  };
}
