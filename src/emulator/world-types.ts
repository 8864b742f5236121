import type { Express } from 'express';
import type { Clock, ClockMode } from '../clock/index.ts';
import type { Db } from '../db.ts';
import type { FaultFile } from '../faults/index.ts';
import type { SessionsControl } from '../http/index.ts';
import type { Random } from '../random/index.ts';
import type { Control } from '../service/index.ts';
import type { Store } from '../store/index.ts';
import type { TaskEngine } from '../tasks/index.ts';

/** How one world is made: the default one from the start options, a session from its creation body. */
export interface WorldSpec {
  /** The world's own store, open and holding what the start imported. */
  store: Store;
  /** Where its files' bytes are kept (null: in memory). */
  filesDir: string | null;
  /** Its control API's tokens: its own first. */
  adminTokens: readonly string[];
  clock: { mode: ClockMode; speed?: number; startTime?: number | string };
  seed?: string;
  /** Fills an empty store at start, and the wiped one of a reset (inside their transaction). */
  seedAccounts: (db: Db, random: Random, nowMs: number) => void;
  /** Fault rules in force from the start until removed (a reset clears them). */
  faults?: FaultFile | null;
  /** Where `close()` writes the state document, last before the store closes. */
  exportOnExit?: string;
  /** Whether another world of the emulator holds this key: a state import may not bring it here too. */
  keyElsewhere: (key: string) => boolean;
  /** What `/_emulator/sessions` answers in this world. */
  sessions: SessionsControl;
}

/** One isolated world: a store, a clock, its scheduled work, its control API and its HTTP app. */
export interface World {
  app: Express;
  control: Control;
  clock: Clock;
  adminToken: string;
  store: Store;
  db: Db;
  engine: TaskEngine;
  random: Random;
  /** What the background check found wrong with the store, once it has run. */
  status: { storeDamage: string | null };
  /** Rows of the records that grow with use, and the bytes the store takes on disk (0 in memory). */
  sizes(): { calls: number; deliveries: number; bytes: number };
  /** Ends the app's paced waits at once (a closing server). */
  hurry(): void;
  close(): Promise<void>;
}
