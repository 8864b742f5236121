import { dirname, join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { isEmpty, seedStore } from './accounts/index.ts';
import { repositories } from './db.ts';
import { createApp } from './app.ts';
import { createClock } from './clock/index.ts';
import { createContract } from './contract/index.ts';
import { START_DEFAULTS } from './defaults/index.ts';
import { keepRecordsFor30Days } from './calls/index.ts';
import { createBlobStore, createFileKeeper } from './files/index.ts';
import { refusals } from './http/index.ts';
import type { AppConfig } from './http/index.ts';
import { createApi, createControl, lifecycleOf, releaseWhenTaskEnds, stampClockOnCommit } from './service/index.ts';
import type { StateCounts, StateOps } from './service/index.ts';
import { createConcurrency, createRateLimiter, sweepExpiredNonces } from './keys/index.ts';
import { fileBytes, LONG_FILE_BYTES, LONG_TASK_COUNT, sizeText, startupSteps } from './log/index.ts';
import { loadTextModels } from './models/index.ts';
import { createScenarioRegistry, loadScenarioLibrary } from './scenarios/index.ts';
import { createTaskEngine } from './tasks/index.ts';
import { refundInterruptedTextCalls } from './text/index.ts';
import { createSender, createSendPool, createWebhooks, keepDeliveriesFor, resolveWithDns } from './webhooks/index.ts';
import { createRandom, ids } from './random/index.ts';
import { createFaultRules } from './faults/index.ts';
import { createClientLog } from './verdict/index.ts';
import { createLimitedServer, followRequests, hurriable, resolveLimits } from './server/index.ts';
import { checkStoreFile, checkStoreInBackground, damageMessage, diskFull, openStore, StoreDamageError, StoreOpenError } from './store/index.ts';
import { exportState, importState, writeStateFile } from './state/index.ts';
import type { Store } from './store/index.ts';
import { VERSION } from './version.ts';
import type { Emulator, EmulatorOptions } from './emulator-types.ts';
import { journalToImport, readFaultFileOrStop, readStateDocument } from './start-files.ts';

export type { Emulator, EmulatorInternals, EmulatorOptions } from './emulator-types.ts';

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

async function buildEmulator(options: EmulatorOptions, opened: (store: Store) => void): Promise<Emulator> {
  const log = options.log ?? (options.logger ? (message: string) => options.logger?.error(message) : (message: string) => console.error(message));
  const warn = options.logger ? (message: string) => options.logger?.warn(message) : log;
  const step = startupSteps(options.logger ? (message) => options.logger?.info(message) : null);
  // The scenarios first: a bad file stops the start before a big store is opened or imported.
  const contract = createContract();
  const library = loadScenarioLibrary(contract, options.scenariosDir);
  for (const { name, file } of library.replaced) warn(`scenario '${name}' from ${file} replaces the built-in one`);
  const faultFile = options.faults !== undefined ? readFaultFileOrStop(options.faults, contract) : null;
  const journal = options.db ? await journalToImport(options.db, options.journalStore, step) : null;
  // A state document to import is read and checked whole before the store opens: a refused one leaves it untouched.
  const imported = options.importState ? await readStateDocument(options.importState, contract, step) : null;
  const storeBytes = options.db ? fileBytes(options.db) : 0;
  const store = step(
    `opening the store ${options.db ?? ''}`,
    `${sizeText(storeBytes)}, checked in the background once open`,
    // A write-ahead log a killed emulator left is read on opening, too.
    storeBytes + (options.db ? fileBytes(`${options.db}-wal`) : 0) >= LONG_FILE_BYTES,
    () =>
      openStore({
        ...(options.db ? { path: options.db } : {}),
        sync: options.storeSync ?? false,
        check: options.storeCheck ?? true,
        onEffectError: (err) => log(`an effect after a commit failed: ${String((err as Error)?.stack ?? err)}`),
      }),
  );
  opened(store);
  const db = repositories(store);
  if (journal) {
    step(`importing the journal store ${journal.from} into the store`, `${journal.state.tasks.length} tasks, ${journal.state.calls.length} call records`, journal.long, () =>
      store.transaction(() => importState(db, journal.state)),
    );
    warn(`imported the journal store ${journal.from} (${journal.state.tasks.length} tasks, ${journal.state.accounts.length} accounts)${journal.aside ? `; its files are in ${journal.aside}` : ''}`);
  }
  if (imported) {
    const { path, bytes, state } = imported;
    // Replacing a big store's records takes long too, however small the document.
    step(`importing the state document ${path}`, `${sizeText(bytes)}, replacing what the store holds`, bytes >= LONG_FILE_BYTES || storeBytes >= LONG_FILE_BYTES, () =>
      store.transaction(() => importState(db, state)),
    );
  }
  const storedClock = store.meta.get<number>('clock_ms');
  const clock = createClock({
    mode: options.clock ?? START_DEFAULTS.clock,
    onJobError: (err) => log(`a scheduled job failed: ${String((err as Error)?.stack ?? err)}`),
    // A job the full disk refused rolled back whole: it runs again a second later, until there is room.
    retryAfterMs: (err) => (diskFull(err) ? 1000 : null),
    ...(options.speed !== undefined ? { speed: options.speed } : {}),
    ...(options.startTime !== undefined ? { startMs: new Date(options.startTime).getTime() } : {}),
    // Virtual time never runs backwards across a restart: tasks already stored keep their order.
    ...(storedClock !== undefined ? { notBeforeMs: storedClock } : {}),
  });
  // Checked now, so that bad limits fail the start rather than the first listen.
  const limits = resolveLimits(options.limits);
  // Before any other write: the 'starts' count below is stamped too.
  stampClockOnCommit(store, clock, storedClock);
  // A seed gives the same ids on every fresh store; on a store that already holds some, each start draws from
  // its own sequence, or it would hand out the ids the last run used.
  const starts = store.transaction(() => {
    const count = (store.meta.get<number>('starts') ?? 0) + 1;
    store.meta.set('starts', count);
    return count;
  });
  const random = createRandom(options.seed === undefined || starts === 1 ? options.seed : `${options.seed}#${starts}`);
  const adminToken = options.adminToken ?? ids.adminToken(createRandom());
  const scenarios = createScenarioRegistry(library.scenarios, db.scenarios);
  const blobs = createBlobStore(options.db ? join(dirname(options.db), 'files') : null);
  const files = createFileKeeper(clock, db, blobs);
  // The address `listen` binds, once it has (unless one was given): the one part of the config learned later.
  let listeningAt: string | null = null;
  // Read-only from here on: every part reads the same values for the emulator's whole life.
  const config: Readonly<AppConfig> = Object.freeze({
    adminToken,
    allowInsecureWebhooks: options.allowInsecureWebhooks ?? false,
    bodyLimit: options.bodyLimit ?? '1mb',
    textBodyLimit: options.textBodyLimit ?? START_DEFAULTS.maxTextBodyBytes,
    version: VERSION,
    get publicUrl(): string {
      return options.publicUrl ?? listeningAt ?? `http://${START_DEFAULTS.host}:${START_DEFAULTS.port}`;
    },
    fileRetentionMs: (options.fileRetentionSeconds ?? START_DEFAULTS.fileRetentionHours * 3600) * 1000,
    recordContent: options.recordContent ?? false,
    allowedHosts: options.allowedHosts ?? [],
  });
  // What the background check found wrong with the store, once it has run (health answers 503 while set).
  const status: { storeDamage: string | null } = { storeDamage: null };
  const engine = createTaskEngine({
    clock,
    db,
    random,
    models: contract.taskModels,
    files,
    publicUrl: () => config.publicUrl,
    fileRetentionMs: config.fileRetentionMs,
    logger: options.logger ?? null,
  });

  // A batch of fault rules added without a seed draws one: from the emulator's seed when it has one, so a seeded
  // run injects the same faults every time.
  const faultSeeds = createRandom(options.seed === undefined ? undefined : `${options.seed}#faults`);
  const faults = createFaultRules(() => faultSeeds.string(16, '0123456789abcdef'));
  const clientLog = createClientLog();
  const webhooks = createWebhooks({
    faults,
    clientLog,
    clock,
    db,
    random,
    send: options.send ?? createSender(config.allowInsecureWebhooks),
    pool: createSendPool(options.webhookConcurrency),
    timeoutMs: options.webhookTimeoutMs ?? START_DEFAULTS.webhookTimeoutMs,
    virtualTimestamps: options.webhookTimestamps === 'virtual',
    logger: options.logger ?? null,
    onError: (err) => log(`a callback attempt could not be recorded: ${String((err as Error)?.stack ?? err)}`),
  });
  const concurrency = createConcurrency();
  const rateLimiter = createRateLimiter();
  // The app's latency waits end at once when closing, so paced streams finish inside the grace period.
  const pacing = hurriable(clock);
  let closeServer: ((graceMs: number) => Promise<number>) | null = null;
  // Waited for before the store closes: a process must not end while the check's worker is in the middle of a query.
  let backgroundCheck: Promise<void> = Promise.resolve();

  // What the emulator runs, in order: each part's start at start, its afterReplace once a reset or a state import
  // has replaced everything stored, and its stop at close (in reverse order: the server first, the store last).
  const lifecycle = lifecycleOf([
    // Last: no transaction may follow.
    {
      name: 'store',
      stop: async () => {
        await backgroundCheck;
        await store.close();
      },
    },
    {
      name: 'export on exit',
      stop: async () => {
        if (options.exportOnExit) await writeStateFile(options.exportOnExit, exportState(db, clock.now()));
      },
    },
    { name: 'clock', stop: () => clock.stop() },
    {
      name: 'seed accounts',
      start: () => {
        if (isEmpty(db)) store.transaction(() => seedStore(db, random, clock.now()));
      },
    },
    {
      name: 'interrupted text calls',
      start: () => {
        const interrupted = refundInterruptedTextCalls(db, clock.now());
        if (interrupted.length > 0) {
          warn(`refunded ${interrupted.length} text call(s) the last run stopped in the middle of: ${interrupted.slice(0, 5).join(', ')}`);
        }
      },
    },
    {
      name: 'task ends',
      start: () => {
        engine.onTerminal(releaseWhenTaskEnds(db, concurrency));
        engine.onTerminal(webhooks.taskFinished);
      },
    },
    { name: 'file bytes', afterReplace: () => blobs.clear() },
    {
      name: 'tasks',
      start: () => {
        // Each unfinished task is read and scheduled (some 50 µs each): a store of many takes seconds.
        const unfinished = db.tasks.countUnfinished();
        step(`scheduling ${unfinished} unfinished tasks`, null, unfinished >= LONG_TASK_COUNT, () => {
          concurrency.rebuild(db.tasks.unfinished());
          engine.resume();
        });
      },
      afterReplace: () => {
        concurrency.rebuild(db.tasks.unfinished());
        engine.resume();
      },
    },
    { name: 'rate limits', afterReplace: () => rateLimiter.clear() },
    // A reset (or an import) starts a new run: no fault rule of the last one (those of --faults included: a reset
    // clears every rule), no verdict on what it saw.
    {
      name: 'faults and client log',
      start: () => {
        if (faultFile) faults.add(faultFile.rules, faultFile.seed);
      },
      afterReplace: () => {
        faults.clear();
        clientLog.clear();
      },
    },
    { name: 'file expiry', start: () => files.resume(), afterReplace: () => files.resume() },
    { name: 'callbacks', start: () => webhooks.resume(), afterReplace: () => webhooks.resume(), stop: () => webhooks.stop() },
    {
      name: 'retention',
      start: () => {
        keepRecordsFor30Days(clock, db);
        keepDeliveriesFor(clock, db, options.deliveryRetentionSeconds !== undefined ? options.deliveryRetentionSeconds * 1000 : undefined);
        sweepExpiredNonces(clock, db);
      },
    },
    {
      // Once everything the start reads has been read (a damaged row it meets stops the start instead).
      name: 'store check',
      start: () => {
        if (!store.backgroundCheck || !store.path) return;
        const path = store.path;
        backgroundCheck = step(`checking the store ${path} in the background`, sizeText(fileBytes(path)), fileBytes(path) >= LONG_FILE_BYTES, () =>
          checkStoreInBackground(path),
        ).then(
          (problems) => {
            if (problems.length === 0) return;
            status.storeDamage = damageMessage(path, problems);
            log(status.storeDamage);
          },
          (err: unknown) => log(`the store check could not run: ${String(err)}`),
        );
      },
    },
    {
      name: 'server',
      stop: async () => {
        pacing.hurry();
        if (!closeServer) return;
        const graceMs = options.shutdownGraceMs ?? START_DEFAULTS.shutdownGraceMs;
        const cut = await closeServer(graceMs);
        if (cut > 0) warn(`closing: ${cut} request(s) still unfinished after the ${graceMs} ms grace period were cut`);
        // A handler that saw its connection cut records that on its next turn; let it, before the last write.
        await new Promise((resolve) => setImmediate(resolve));
      },
    },
  ]);

  /**
   * Everything stored replaced at once (a reset, a state import), in one transaction; then every part follows it
   * (caches built from the store, work the new records hold scheduled).
   */
  const replaceAll = (fill: () => void): StateCounts =>
    store.transaction(() => {
      fill();
      store.afterCommit(() => lifecycle.afterReplace());
      const accounts = db.accounts.all();
      return {
        accounts: accounts.length,
        keys: accounts.reduce((sum, a) => sum + db.keys.ofAccount(a.id).length, 0),
        tasks: db.tasks.count(),
      };
    });
  const state: StateOps = {
    reset: () =>
      replaceAll(() => {
        store.wipe();
        // Ledger ids start again from 1: the check for interrupted text calls starts again with them.
        store.meta.set('ledger_checked', 0);
        seedStore(db, random, clock.now());
      }),
    export: () => exportState(db, clock.now()),
    // The import wipes the store itself, and sets where the check for interrupted text calls starts.
    import: (document) => replaceAll(() => importState(db, document)),
  };

  const resolveHost = options.resolveHost ?? resolveWithDns;
  const control = createControl({ clock: pacing.clock, db, random, engine, scenarios, contract, webhooks, resolveHost, state, faults, config, status, clientLog });
  const textModels = loadTextModels();
  const api = createApi({ clock: pacing.clock, db, random, engine, scenarios, textModels, concurrency, blobs, files, resolveHost, warn, textAnswers: options.textAnswers ?? START_DEFAULTS.textAnswers, config });
  const app = createApp({
    control,
    api,
    clock: pacing.clock,
    db,
    random,
    contract,
    log,
    config,
    textModels,
    logger: options.logger ?? null,
    rateLimiter,
    faults,
    clientLog,
  });
  lifecycle.start();

  let closing: Promise<void> | null = null;
  const emulator: Emulator = {
    app,
    control,
    clock,
    adminToken,
    internals: { store, db, engine, contract },
    verdict: (filter) => control.verdict.judge(filter),
    server: null,
    listen(port: number = START_DEFAULTS.port, host: string = START_DEFAULTS.host) {
      // Requests the server itself refuses (too large, too slow, not HTTP) are answered and recorded as the app's are.
      const refuse = refusals({ random, clock, db, logger: options.logger ?? null });
      const server = createLimitedServer(app, limits, { warn, refuse });
      closeServer = followRequests(server);
      emulator.server = server;
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          const address = server.address() as AddressInfo;
          const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
          const url = `http://${shownHost}:${address.port}`;
          listeningAt = url;
          resolve(url);
        });
      });
    },
    close() {
      // Closing twice (a signal and a test's afterEach) shares one shutdown and writes once.
      closing ??= lifecycle.stop();
      return closing;
    },
  };
  return emulator;
}
