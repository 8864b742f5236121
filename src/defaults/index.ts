/**
 * Defaults and limits that the CLI states in its help and checks in its options, apart from the code that uses
 * them: the CLI loads a command's modules only when that command runs (the conformance suite, say, has no place in
 * an emulator's start-up), and another folder's index.ts loads all of that folder. A leaf: it imports nothing, so
 * every folder may read its values.
 */

/** Points the conformance suite may spend unless told otherwise. */
export const DEFAULT_BUDGET = 200;

/** Real ms an upstream has to send the proxy its status line, by default. */
export const DEFAULT_UPSTREAM_TIMEOUT_MS = 60_000;
/** The proxy's longest upstream timeout: a day (node's timers take at most 2^31 - 1 ms). */
export const MAX_UPSTREAM_TIMEOUT_MS = 86_400_000;
/**
 * Deployment ms a relayed task's callback has to come through the proxy once a read showed the task terminal, by
 * default: the first attempt's window, the minute after which a first failure would be retried.
 */
export const DEFAULT_CALLBACK_DEADLINE_MS = 60_000;

/**
 * Where `start` and `store` keep the store unless told otherwise. Here, not in src/cli/start-options.ts, because
 * every command's help names it, and the start options' table loads the emulator's folders (the store among them).
 */
export const DEFAULT_DB = './.svc-emulator/store.db';

/**
 * The start options' defaults, each written once: `start`'s option table (src/cli/start-options.ts) states them
 * in its help and resolves them, and the emulator applies the same values when built in-process without the CLI
 * (`createEmulator()`). Only values live here; what an option means and how its help reads stay in the table.
 */
export const START_DEFAULTS = {
  host: '127.0.0.1',
  port: 4010,
  clock: 'real',
  /** Real clock only: how many times faster than the wall clock. */
  speed: 1,
  fileRetentionHours: 7 * 24,
  /** Emulator-defined: the reference does not say how long deliveries stay listed and resendable. */
  deliveryRetentionHours: 30 * 24,
  webhookTimestamps: 'real',
  /** Real ms a callback receiver has to answer (the reference's limit). */
  webhookTimeoutMs: 10_000,
  /** Callback sends in flight at once, at most. */
  webhookConcurrency: 256,
  /** Node's own header size. */
  maxHeaderBytes: 16 * 1024,
  /** The JSON body of the task, file-less and control endpoints at most (not a start option: in-process only). */
  bodyLimit: '1mb',
  /** A text call's body at most: a message with a few photos in base64 (the reference sets no limit). */
  maxTextBodyBytes: 20 * 1024 * 1024,
  /** Never longer than the request timeout (see resolveLimits in src/server/limits.ts). */
  headersTimeoutMs: 60_000,
  /** Ten minutes to send a request: a 50 MB upload at 85 KB/s. */
  requestTimeoutMs: 600_000,
  /** Node's own keep-alive. */
  keepAliveTimeoutMs: 5_000,
  /** Real ms requests in flight get to finish on a shutdown before their connections are cut. */
  shutdownGraceMs: 10_000,
  textAnswers: 'generate',
  logLevel: 'info',
  logFormat: 'pretty',
} as const;
