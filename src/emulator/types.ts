import type { RequestListener, Server } from 'node:http';
import type { Clock, ClockMode } from '../clock/index.ts';
import type { Contract } from '../contract/index.ts';
import type { Db } from '../db.ts';
import type { Logger } from '../log/index.ts';
import type { ServerLimits } from '../server/index.ts';
import type { Control, VerdictFilter } from '../service/index.ts';
import type { Store } from '../store/index.ts';
import type { TaskEngine } from '../tasks/index.ts';
import type { Verdict } from '../verdict/index.ts';
import type { ResolveHost, Send } from '../webhooks/index.ts';
import type { NewSession, SessionsControl } from '../sessions/index.ts';

// What `createEmulator` takes and gives, apart from how it builds it (index.ts): the programmatic API's types.

export interface EmulatorOptions {
  /** SQLite file for the store; without it the store lives in memory. */
  db?: string;
  clock?: ClockMode;
  /** Real clock only: run this many times faster than the wall clock. */
  speed?: number;
  /** Virtual time to start a fresh clock at (epoch ms or ISO 8601); default: now, or where a stored clock stopped. */
  startTime?: number | string;
  adminToken?: string;
  allowInsecureWebhooks?: boolean;
  /** Makes ids and generated data repeatable. */
  seed?: string;
  /** Largest JSON body of the task, file-less and control endpoints (body-parser notation or bytes); default 1 MB. */
  bodyLimit?: string | number;
  /** Largest JSON body of the three text endpoints, images in base64 included; default 20 MB. */
  textBodyLimit?: string | number;
  /**
   * Scenarios added to the built-in ones (the package's `scenarios/`): a folder of `*.yaml`, `*.yml` and `*.json`
   * files, or one file. One with a built-in's name replaces it (with a warning).
   */
  scenariosDir?: string;
  /** How long uploaded and result files live (`expires_at`); default 7 days. */
  fileRetentionSeconds?: number;
  /** Seconds a finished callback message stays listed and resendable; default 30 days. */
  deliveryRetentionSeconds?: number;
  /** File store: wait for the disk on every commit (survives a power cut, not only a killed process). */
  storeSync?: boolean;
  /**
   * A store of the journal engine before SQLite, imported once when `db` is missing (`db` itself may be one: its
   * files are set aside in `db.journal-store/` and the SQLite store takes its place).
   */
  journalStore?: string;
  /** A state document (`POST /_emulator/state/export`) that replaces whatever the store holds at start. */
  importState?: string;
  /** Where `close()` writes the state document, last before the store closes. */
  exportOnExit?: string;
  /** Check a file store in the background once it is open (default true; see the README's Store section). */
  storeCheck?: boolean;
  /** The address result files are served under; default: the address `listen` binds. */
  publicUrl?: string;
  /**
   * Host names requests may be addressed to besides localhost, 127.0.0.1, [::1], the address a connection arrived
   * at and the public URL's host (the guard against DNS rebinding); `['*']` answers any. Default none.
   */
  allowedHosts?: readonly string[];
  /** Real milliseconds a callback receiver has to answer; default 10000 (the reference's limit). */
  webhookTimeoutMs?: number;
  /** `real` (default): webhook-timestamp is the wall-clock send time; `virtual`: the virtual time. */
  webhookTimestamps?: 'real' | 'virtual';
  /** Callback sends in flight at once, at most; default 256. */
  webhookConcurrency?: number;
  /** Sends callbacks; default: real HTTP with the internal-address guard. */
  send?: Send;
  /** Resolves callback host names for the guard; default: the system resolver. */
  resolveHost?: ResolveHost;
  /** Keep prompts and outputs of text calls in their call records. */
  recordContent?: boolean;
  /**
   * A text call no scenario's match rules (nor the header) choose: `generate` (default) answers with made-up text;
   * `strict` refuses it, 422 `no_matching_answer` naming what was asked and the rules that came closest, and fails
   * a call whose fixed answer does not fit it (a JSON or tool arguments off the request's schema) the same way.
   */
  textAnswers?: 'generate' | 'strict';
  /** Where unexpected errors go (default: standard error, or `logger` when given). */
  log?: (message: string) => void;
  /** Structured log lines: one per request, and errors. */
  logger?: Logger;
  /** Header size, timeouts and connection cap of the listening server; see `ServerLimits` for the defaults. */
  limits?: Partial<ServerLimits>;
  /** Real ms `close()` lets requests in flight finish before cutting their connections; default 10000. */
  shutdownGraceMs?: number;
  /**
   * A fault file (YAML or JSON, the body of `POST /_emulator/faults`): its rules are in force from the start until
   * they are removed, or a reset or state import clears every rule.
   */
  faults?: string;
  /**
   * The clock sessions' idle time-to-live runs on; default the wall clock. A test gives a manual clock of its
   * own to end idle sessions without waiting.
   */
  sessionsClock?: Clock;
}

/**
 * What a test suite looks inside with; not the programmatic API (that is `control`), and free to change: a test
 * that reads these is a test of the emulator itself.
 */
export interface EmulatorInternals {
  store: Store;
  /** The store's repositories, one per kind of record. */
  db: Db;
  engine: TaskEngine;
  contract: Contract;
}

export interface Emulator {
  /** Every request's handler (supertest takes it): routes each to its world, the default one or a session's. */
  app: RequestListener;
  /**
   * Every operation of the control API (/_emulator) as typed functions, answering what the control API answers:
   * the clock, accounts, keys, tasks, scenarios, call records, callbacks, the state and reset.
   */
  control: Control;
  clock: Clock;
  adminToken: string;
  internals: EmulatorInternals;
  /**
   * How the clients behaved since the last reset (or one key's, one account's), judged check by check: what
   * `GET /_emulator/verdict` answers. A test ends with `expect(emulator.verdict({ key }).ok).toBe(true)`.
   */
  verdict(filter?: VerdictFilter): Verdict;
  /** Starts listening; resolves with the base address (`http://127.0.0.1:4010`). */
  listen(port?: number, host?: string): Promise<string>;
  readonly server: Server | null;
  /**
   * A session: a world of its own on this emulator (accounts, keys, tasks, records, scenarios, faults, verdict and
   * its own clock), reached over HTTP by its key and admin token, steered in-process by the handle's `control`.
   * Takes what `POST /_emulator/sessions` takes.
   */
  createSession(options?: NewSession): Promise<SessionHandle>;
  /** The sessions as `/_emulator/sessions` answers them with the emulator's token: make, list, look at, end. */
  sessions: SessionsControl;
  /**
   * Stops listening (before it returns), lets requests in flight finish (text streams at once, unpaced) for up to
   * the grace period, cuts what is left, stops the clock and flushes the store. Calling it again returns the same
   * promise.
   */
  close(): Promise<void>;
}

/** A session made in-process: how to reach it over HTTP, and the same typed control API as the emulator's. */
export interface SessionHandle {
  /** `ses_` + 24 lowercase letters or digits. */
  id: string;
  name: string;
  /** The key of its first account (routes every /v1 request to this session). */
  key: string;
  accountId: string;
  /** The first account's `whsec_` secret, which signs its callbacks. */
  webhookSecret: string;
  /** Reaches the usual /_emulator paths, and sees only this session. */
  adminToken: string;
  control: Control;
  clock: Clock;
  verdict(filter?: VerdictFilter): Verdict;
  /** Wipes the session and seeds it again, as `POST /_emulator/reset` with its token. */
  reset(): { ok: true; accounts: number; keys: number };
  /** Ends the session: its world stops and its store and files are deleted. Twice is once. */
  dispose(): Promise<void>;
}
