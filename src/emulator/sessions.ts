import { createClock, formatTime } from '../clock/index.ts';
import type { Clock } from '../clock/index.ts';
import { ApiError } from '../errors/index.ts';
import { createRandom } from '../random/index.ts';
import { checkScenarios } from '../scenarios/index.ts';
import { removeUnlisted, saveSessions, storedSessions } from '../sessions/index.ts';
import type { NewSession, SessionCreated, SessionRecord, SessionsControl, SessionView } from '../sessions/index.ts';
import { checkStateDocument } from '../state/index.ts';
import type { Store } from '../store/index.ts';
import { START_DEFAULTS } from '../defaults/index.ts';
import type { Host } from './host.ts';
import { checkNewSession, sessionIds } from './session-input.ts';
import { drawAccounts, openSessionWorld } from './session-world.ts';
import type { SessionHooks, SessionWorld } from './session-world.ts';
import { refuseKeysElsewhere } from './world-state.ts';
import type { World } from './world.ts';

/** Every session of one emulator, beside its default world: made, found, routed to, ended. */
export interface Sessions {
  /** Whether a session holds this key: the default world's state import may not bring it there too. */
  keyElsewhere(key: string): boolean;
  /** What the default world's `/_emulator/sessions` does: every session. */
  control: SessionsControl;
  /** What a session's own `/_emulator/sessions` does: itself only. */
  scoped(id: () => string): SessionsControl;
  /** The session a key belongs to, if any (else the key is the default world's, or nobody's). */
  forKey(key: string): SessionWorld | null;
  /** The session whose admin token this is. */
  forToken(token: string): SessionWorld | null;
  byId(id: string): SessionWorld | null;
  /** The session that serves a file of this name. */
  forFile(name: string): SessionWorld | null;
  readonly size: number;
  touch(session: SessionWorld): void;
  /** The sessions the default store lists, built again (a start). */
  restore(): void;
  hurry(): void;
  close(): Promise<void>;
}

export interface SessionsDeps {
  host: Host;
  defaultWorld: () => World;
  /** The default world's store: it lists the sessions, and sessions' folders sit beside its file. */
  store: Store;
  mainToken: string;
  /** The clock idle time-to-live runs on: the wall clock unless a test gives its own. */
  clock?: Clock;
}

export function createSessions(deps: SessionsDeps): Sessions {
  const { host, store, mainToken } = deps;
  const clock = deps.clock ?? createClock({ mode: 'real' });
  const random = createRandom();
  const live = new Map<string, SessionWorld>();
  const byToken = new Map<string, SessionWorld>();
  // Keys are looked up in each session on a miss, then remembered; a key a session no longer holds is looked up again.
  const keyIndex = new Map<string, SessionWorld>();
  const expiries = new Map<string, () => void>();

  const save = (): void => saveSessions(store, [...live.values()].map((s) => s.record));
  const view = (s: SessionWorld): SessionView => sessionView(s);

  const watchIdle = (s: SessionWorld): void => {
    expiries.get(s.record.id)?.();
    const ttl = s.record.ttl_seconds;
    if (ttl === null) return;
    expiries.set(s.record.id, clock.at(s.lastUsedMs + ttl * 1000, () => {
      // Used since this was set: wait again from the last use.
      if (clock.now() < s.lastUsedMs + ttl * 1000) return watchIdle(s);
      void end(s.record.id).catch((err: unknown) => host.log(`an idle session could not be ended: ${String(err)}`));
    }));
  };

  const add = (s: SessionWorld): void => {
    s.lastUsedMs = clock.now();
    live.set(s.record.id, s);
    byToken.set(s.record.admin_token, s);
    watchIdle(s);
  };

  async function end(id: string): Promise<{ ok: true; id: string }> {
    const s = live.get(id);
    if (!s) throw notFound(id);
    live.delete(id);
    byToken.delete(s.record.admin_token);
    for (const [key, owner] of keyIndex) if (owner === s) keyIndex.delete(key);
    expiries.get(id)?.();
    expiries.delete(id);
    // Off the list first: a kill in the middle leaves a folder no start builds again, never a listed session without one.
    save();
    await s.end(true);
    return { ok: true, id };
  }

  /** The world holding a key: the default one, or a session's. */
  const keyOwner = (key: string): World | null => (deps.defaultWorld().db.keys.get(key) !== undefined ? deps.defaultWorld() : (sessions.forKey(key)?.world ?? null));

  async function create(input: NewSession): Promise<SessionCreated> {
    const checked = await checkNewSession(host, input);
    const state = checked.state ? checkStateDocument(host.contract, checked.state) : undefined;
    const scenarios = checked.scenarios ? checkScenarios(host.contract, { scenarios: checked.scenarios }) : null;
    // Every key belongs to exactly one world: that is how a request finds its session.
    if (state) refuseKeysElsewhere(state, (key) => keyOwner(key) !== null, 'state.');
    const { id, token } = sessionIds(random, (candidate) => live.has(candidate));
    const record: SessionRecord = {
      id,
      name: checked.name ?? id,
      admin_token: token,
      created_ms: clock.now(),
      ttl_seconds: checked.ttl_seconds ?? null,
      clock: { mode: checked.clock?.mode ?? host.options.clock ?? START_DEFAULTS.clock, speed: checked.clock?.speed ?? START_DEFAULTS.speed },
      seed: checked.seed ?? null,
      accounts: state ? null : drawAccounts(checked.seed === undefined ? random : createRandom(`${checked.seed}#accounts`), random, checked.accounts),
      faults: checked.faults ?? null,
    };
    const s = openSessionWorld(host, store.path, record, worldHooks(record.id), mainToken, {
      ...(state ? { state } : {}),
      ...(checked.clock?.start_time !== undefined ? { startTime: checked.clock.start_time } : {}),
    });
    try {
      if (scenarios) s.world.control.scenarios.load(scenarios);
      add(s);
      save();
    } catch (err) {
      live.delete(id);
      byToken.delete(token);
      await s.end(true);
      throw err;
    }
    const account = s.world.db.accounts.all()[0];
    const key = account ? s.world.db.keys.ofAccount(account.id)[0] : undefined;
    return {
      ...view(s),
      admin_token: token,
      key: key?.key ?? '',
      account: account ? s.world.control.accounts.get(account.id) : {},
      webhook_secret: account?.webhook_secret ?? '',
    };
  }

  /** What a session's world asks of the others: its own `/_emulator/sessions`, and whether a key is another world's. */
  const worldHooks = (id: string): SessionHooks => ({
    sessions: sessions.scoped(() => id),
    keyElsewhere: (key) => {
      const owner = keyOwner(key);
      return owner !== null && owner !== live.get(id)?.world;
    },
  });

  const sessions: Sessions = {
    keyElsewhere: (key) => {
      const owner = keyOwner(key);
      return owner !== null && owner !== deps.defaultWorld();
    },
    control: {
      create,
      list: () => ({ object: 'list', scope: 'emulator', data: [...live.values()].map(view) }),
      get: (id) => view(found(live.get(id), id)),
      delete: end,
    },
    scoped: (own) => ({
      create: () => Promise.reject(new ApiError('unauthorized', "Sessions are made with the emulator's admin token, not a session's.")),
      list: () => ({ object: 'list', scope: 'session', data: [view(found(live.get(own()), own()))] }),
      get: (id) => view(found(id === own() ? live.get(id) : undefined, id)),
      delete: (id) => (id === own() ? end(id) : Promise.reject(notFound(id))),
    }),
    forKey(key) {
      const known = keyIndex.get(key);
      if (known && known.world.db.keys.peek(key)) return known;
      keyIndex.delete(key);
      for (const s of live.values()) {
        if (s.world.db.keys.peek(key)) {
          keyIndex.set(key, s);
          return s;
        }
      }
      return null;
    },
    forToken: (token) => byToken.get(token) ?? null,
    byId: (id) => live.get(id) ?? null,
    forFile(name) {
      for (const s of live.values()) if (s.world.db.files.byName(name)) return s;
      return null;
    },
    get size() {
      return live.size;
    },
    touch(s) {
      s.lastUsedMs = clock.now();
    },
    restore() {
      const { records, problems } = storedSessions(store);
      for (const problem of problems) host.warn(`a stored session is left out: ${problem}`);
      // A folder no row lists is what a kill left between making a session's store and listing it: never
      // acknowledged, so removed (only when every row was read: a row left out may be that folder's).
      if (problems.length === 0) removeUnlisted(store.path, new Set(records.map((r) => r.id)));
      for (const record of records) add(openSessionWorld(host, store.path, record, worldHooks(record.id), mainToken));
    },
    hurry() {
      for (const s of live.values()) s.world.hurry();
    },
    async close() {
      for (const cancel of expiries.values()) cancel();
      clock.stop();
      await Promise.all([...live.values()].map((s) => s.end(false)));
      live.clear();
    },
  };
  return sessions;
}

const notFound = (id: string): ApiError => new ApiError('not_found', `No session ${id} on this emulator.`);

function found(s: SessionWorld | undefined, id: string): SessionWorld {
  if (!s) throw notFound(id);
  return s;
}

function sessionView(s: SessionWorld): SessionView {
  const { record, world } = s;
  const ttl = record.ttl_seconds;
  const accounts = world.db.accounts.all();
  return {
    object: 'session',
    id: record.id,
    name: record.name,
    created_at: formatTime(record.created_ms),
    last_used_at: formatTime(s.lastUsedMs),
    ttl_seconds: ttl,
    expires_at: ttl === null ? null : formatTime(s.lastUsedMs + ttl * 1000),
    clock: { mode: world.clock.mode, speed: world.clock.speed, now: formatTime(world.clock.now()) },
    size: { accounts: accounts.length, tasks: world.db.tasks.count(), ...world.sizes() },
  };
}
