import type { StoredAccount, StoredKey } from '../../accounts/index.ts';
import type { Clock } from '../../clock/index.ts';
import type { Db } from '../../db.ts';
import type { BlobStore, FileKeeper } from '../../files/index.ts';
import type { Concurrency } from '../../keys/index.ts';
import type { TextModel } from '../../models/index.ts';
import type { Random } from '../../random/index.ts';
import type { ScenarioRegistry } from '../../scenarios/index.ts';
import type { TaskEngine } from '../../tasks/index.ts';
import type { ResolveHost } from '../../webhooks/index.ts';

/** Who calls: the account and key the request authenticated as. */
export interface Caller {
  account: StoredAccount;
  key: StoredKey;
}

/** What the /v1 operations decide with. */
export interface ApiDeps {
  clock: Clock;
  db: Db;
  random: Random;
  engine: TaskEngine;
  scenarios: ScenarioRegistry;
  textModels: TextModel[];
  concurrency: Concurrency;
  blobs: BlobStore;
  files: FileKeeper;
  resolveHost: ResolveHost;
  /** The emulator's log, for what a caller should hear of but is not refused for (a fixed answer that does not fit its call). */
  warn: (message: string) => void;
  /** `strict`: a text call no scenario chooses, or whose fixed answer does not fit it, is refused (`no_matching_answer`). */
  textAnswers: 'generate' | 'strict';
  config: {
    readonly allowInsecureWebhooks: boolean;
    /** The emulator's own address (read when used: it is known once the emulator listens). */
    readonly publicUrl: string;
    /** Keep prompts and outputs of text calls in their call records. */
    readonly recordContent: boolean;
    /** How long uploaded and result files live. */
    readonly fileRetentionMs: number;
  };
}
