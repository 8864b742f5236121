import type { Clock } from '../clock/index.ts';
import type { Logger } from '../log/index.ts';
import type { Contract } from '../contract/index.ts';
import type { BlobStore, FileKeeper } from '../files/index.ts';
import type { Concurrency, NonceCache, RateLimiter } from '../keys/index.ts';
import type { TextModel } from '../models/index.ts';
import type { Random } from '../random/index.ts';
import type { ScenarioRegistry } from '../scenarios/index.ts';
import type { Db } from '../db.ts';
import type { StateDocument } from '../state/index.ts';
import type { TaskEngine } from '../tasks/index.ts';
import type { ResolveHost, Webhooks } from '../webhooks/index.ts';

export interface AppConfig {
  adminToken: string;
  allowInsecureWebhooks: boolean;
  /** Largest accepted JSON body, in body-parser notation (`1mb`) or bytes. */
  bodyLimit: string | number;
  /** The same for the three text endpoints, whose messages may carry images (base64). */
  textBodyLimit: string | number;
  version: string;
  /** The address the emulator's own files are served under; set when it starts listening unless given. */
  publicUrl: string;
  fileRetentionMs: number;
  /** Keep prompts and outputs of text calls in their call records (off by default, as the reference says). */
  recordContent: boolean;
  /** What the background check found wrong with the store, once it has run; health answers 503 while set. */
  storeDamage: string | null;
}

/** Everything the routes need, passed in once by the composition root. */
export interface AppDeps {
  clock: Clock;
  /** The store and its repositories; a route's changes go in one `db.store.transaction`. */
  db: Db;
  random: Random;
  contract: Contract;
  config: AppConfig;
  log: (message: string) => void;
  /** Request log lines; none for an in-process emulator unless given. */
  logger: Logger | null;
  engine: TaskEngine;
  scenarios: ScenarioRegistry;
  blobs: BlobStore;
  files: FileKeeper;
  textModels: TextModel[];
  webhooks: Webhooks;
  /** How callback addresses' names are resolved for the internal-address guard. */
  resolveHost: ResolveHost;
  concurrency: Concurrency;
  rateLimiter: RateLimiter;
  nonces: NonceCache;
  /** The whole state at once: wiped and seeded again, written out, or replaced by a document. */
  state: {
    reset(): StateCounts;
    export(): StateDocument;
    import(document: StateDocument): StateCounts;
  };
}

export interface StateCounts {
  accounts: number;
  keys: number;
  tasks: number;
}
