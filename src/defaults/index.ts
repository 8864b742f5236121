/**
 * Defaults and limits of the suite and the proxy that the CLI states in its help and checks in its options, apart
 * from the code that uses them: the CLI loads a command's modules only when that command runs (the conformance
 * suite, say, has no place in an emulator's start-up), and another folder's index.ts loads all of that folder.
 */

/** Points the conformance suite may spend unless told otherwise. */
export const DEFAULT_BUDGET = 200;

/** Real ms an upstream has to send the proxy its status line, by default. */
export const DEFAULT_UPSTREAM_TIMEOUT_MS = 60_000;
/** The proxy's longest upstream timeout: a day (node's timers take at most 2^31 - 1 ms). */
export const MAX_UPSTREAM_TIMEOUT_MS = 86_400_000;

/**
 * Where `start` and `store` keep the store unless told otherwise. Here, not in src/cli/start-options.ts, because
 * every command's help names it, and the start options' table loads the emulator's folders (the store among them).
 */
export const DEFAULT_DB = './.svc-emulator/store.db';
