import type { Clock } from '../clock/index.ts';
import type { Logger } from '../log/index.ts';
import type { Contract } from '../contract/index.ts';
import type { RateLimiter } from '../keys/index.ts';
import type { TextModel } from '../models/index.ts';
import type { Random } from '../random/index.ts';
import type { Db } from '../db.ts';
import type { FaultRules } from '../faults/index.ts';
import type { ClientLogStore } from '../verdict/index.ts';
import type { Api, Control } from '../service/index.ts';
import type { SessionsControl } from '../sessions/index.ts';
import type { DashboardSignIns } from './dashboard-sign-in.ts';

export interface AppConfig {
  /** The tokens this world's control API answers: its own first (a session's also answers the emulator's). */
  adminTokens: readonly string[];
  allowInsecureWebhooks: boolean;
  /** Largest accepted JSON body, in body-parser notation (`1mb`) or bytes. */
  bodyLimit: string | number;
  /** The same for the three text endpoints, whose messages may carry images (base64). */
  textBodyLimit: string | number;
  version: string;
  /** The address the emulator's own files are served under: the one given, else the one `listen` bound. */
  readonly publicUrl: string;
  fileRetentionMs: number;
  /** Keep prompts and outputs of text calls in their call records (off by default, as the reference says). */
  recordContent: boolean;
  /** Host names answered besides the loopback names, the connection's address and the public URL's (`*`: any); host-check.ts. */
  allowedHosts: readonly string[];
}

/**
 * What the app is built from, passed in once by the composition root; each router takes the few of these it uses.
 * The decisions are the services' (`api`, `control`); the rest is what parsing, authenticating, recording and
 * logging a request take.
 */
export interface AppDeps {
  clock: Clock;
  /** The store and its repositories: API keys are looked up and call records written here. */
  db: Db;
  random: Random;
  contract: Contract;
  config: Readonly<AppConfig>;
  log: (message: string) => void;
  /** Request log lines; none for an in-process emulator unless given. */
  logger: Logger | null;
  textModels: TextModel[];
  rateLimiter: RateLimiter;
  /** Every operation of the control API, which the /_emulator routes call. */
  control: Control;
  /** The decisions of /v1 (tasks, text calls, files), which its routes call. */
  api: Api;
  /** Faults injected at run time (`/_emulator/faults`, `--faults`); the /v1 path asks only `faults.empty` when none. */
  faults: FaultRules;
  /** What each client did (its /v1 requests, its receiver's answers), for the verdict. */
  clientLog: ClientLogStore;
  /** `/_emulator/sessions` as this world answers it (the default world: every session; a session: itself). */
  sessions: SessionsControl;
  /** The dashboard's sign-ins, one store for every world of the emulator. */
  signIns: DashboardSignIns;
}
