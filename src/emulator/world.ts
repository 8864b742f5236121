import { createApp } from '../app.ts';
import { createClock } from '../clock/index.ts';
import { repositories } from '../db.ts';
import { createFaultRules } from '../faults/index.ts';
import { createBlobStore, createFileKeeper } from '../files/index.ts';
import type { AppConfig } from '../http/index.ts';
import { createConcurrency, createRateLimiter } from '../keys/index.ts';
import { createRandom } from '../random/index.ts';
import { createScenarioRegistry } from '../scenarios/index.ts';
import { hurriable } from '../server/index.ts';
import { createApi, createControl, lifecycleOf, stampClockOnCommit } from '../service/index.ts';
import { diskFull } from '../store/index.ts';
import type { Store } from '../store/index.ts';
import { createTaskEngine } from '../tasks/index.ts';
import { createClientLog } from '../verdict/index.ts';
import { createSendPool, createWebhooks } from '../webhooks/index.ts';
import { START_DEFAULTS } from '../defaults/index.ts';
import { fileBytes } from '../log/index.ts';
import type { Host } from './host.ts';
import { worldParts } from './world-parts.ts';
import type { World, WorldSpec } from './world-types.ts';
import { worldState } from './world-state.ts';

export type { World, WorldSpec } from './world-types.ts';

/**
 * Builds a world on its open store: its clock (never behind the one the store last stamped), its seeded random,
 * every part in order, the control operations and the app. Its parts start before it returns.
 */
export function buildWorld(host: Host, spec: WorldSpec): World {
  const { store, seed } = spec;
  const db = repositories(store);
  const storedClock = store.meta.get<number>('clock_ms');
  const clock = createClock({
    mode: spec.clock.mode,
    onJobError: (err) => host.log(`a scheduled job failed: ${String((err as Error)?.stack ?? err)}`),
    // A job the full disk refused rolled back whole: it runs again a second later, until there is room.
    retryAfterMs: (err) => (diskFull(err) ? 1000 : null),
    ...(spec.clock.speed !== undefined ? { speed: spec.clock.speed } : {}),
    ...(spec.clock.startTime !== undefined ? { startMs: new Date(spec.clock.startTime).getTime() } : {}),
    // Virtual time never runs backwards across a restart: tasks already stored keep their order.
    ...(storedClock !== undefined ? { notBeforeMs: storedClock } : {}),
  });
  // Before any other write: the 'starts' count below is stamped too.
  stampClockOnCommit(store, clock, storedClock);
  // A seed gives the same ids on every fresh store; on a store that already holds some, each start draws from
  // its own sequence, or it would hand out the ids the last run used.
  const starts = store.transaction(() => {
    const count = (store.meta.get<number>('starts') ?? 0) + 1;
    store.meta.set('starts', count);
    return count;
  });
  const random = createRandom(seed === undefined || starts === 1 ? seed : `${seed}#${starts}`);
  // The shared settings (publicUrl a getter: it follows `listen`) and this world's tokens.
  const config: Readonly<AppConfig> = Object.freeze(Object.defineProperties({ adminTokens: spec.adminTokens }, Object.getOwnPropertyDescriptors(host.config)) as AppConfig);
  const scenarios = createScenarioRegistry(host.library.scenarios, db.scenarios);
  const blobs = createBlobStore(spec.filesDir);
  const files = createFileKeeper(clock, db, blobs);
  const status: { storeDamage: string | null } = { storeDamage: null };
  const logger = host.logger;
  const engine = createTaskEngine({ clock, db, random, models: host.contract.taskModels, files, publicUrl: () => config.publicUrl, fileRetentionMs: config.fileRetentionMs, logger });
  // A batch of fault rules added without a seed draws one: from the world's seed when it has one, so a seeded run
  // injects the same faults every time.
  const faultSeeds = createRandom(seed === undefined ? undefined : `${seed}#faults`);
  const faults = createFaultRules(() => faultSeeds.string(16, '0123456789abcdef'));
  const clientLog = createClientLog();
  const { options } = host;
  const webhooks = createWebhooks({
    faults,
    clientLog,
    clock,
    db,
    random,
    send: host.send,
    pool: createSendPool(options.webhookConcurrency),
    timeoutMs: options.webhookTimeoutMs ?? START_DEFAULTS.webhookTimeoutMs,
    virtualTimestamps: options.webhookTimestamps === 'virtual',
    logger,
    onError: (err) => host.log(`a callback attempt could not be recorded: ${String((err as Error)?.stack ?? err)}`),
  });
  const concurrency = createConcurrency();
  const rateLimiter = createRateLimiter();
  // The app's latency waits end at once when closing, so paced streams finish inside the grace period.
  const pacing = hurriable(clock);
  const parts = worldParts(host, { store, db, clock, random, engine, webhooks, files, blobs, concurrency, rateLimiter, faults, clientLog, status, spec });
  const lifecycle = lifecycleOf(parts);
  const state = worldState(store, db, () => lifecycle.afterReplace(), (nowMs) => spec.seedAccounts(db, random, nowMs), clock, spec.keyElsewhere);
  const { contract, resolveHost, textModels } = host;
  const control = createControl({ clock: pacing.clock, db, random, engine, scenarios, contract, webhooks, resolveHost, state, faults, config, status, clientLog });
  const textAnswers = options.textAnswers ?? START_DEFAULTS.textAnswers;
  const api = createApi({ clock: pacing.clock, db, random, engine, scenarios, textModels, concurrency, blobs, files, resolveHost, warn: host.warn, textAnswers, config });
  const app = createApp({ control, api, clock: pacing.clock, db, random, contract, log: host.log, config, textModels, logger, rateLimiter, faults, clientLog, sessions: spec.sessions, signIns: host.signIns });
  lifecycle.start();
  let closing: Promise<void> | null = null;
  return {
    app,
    control,
    clock,
    adminToken: spec.adminTokens[0] as string,
    store,
    db,
    engine,
    random,
    status,
    sizes: () => ({
      calls: rowCount(store, 'calls'),
      deliveries: rowCount(store, 'deliveries'),
      bytes: store.path ? fileBytes(store.path) + fileBytes(`${store.path}-wal`) : 0,
    }),
    hurry: () => pacing.hurry(),
    close: () => (closing ??= lifecycle.stop()),
  };
}

const rowCount = (store: Store, table: 'calls' | 'deliveries'): number => Number(store.driver.prepare(`SELECT count(*) FROM ${table}`).get()?.[0] ?? 0);
